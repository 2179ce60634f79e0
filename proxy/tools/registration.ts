/**
 * Clients on disk (DESIGN §3, §7): `<home>/clients/<client>/` holds the stored advertisement and
 * `workspaces/<ws>`, one empty file per workspace the client is registered in. `holdfast.yaml`'s
 * `clients.<c>.workspaces` lists are written into those files when serve starts (and when a
 * clients command runs without a server); every check reads the files. Invariant: after a sync the
 * files are exactly the lists; a client or workspace name that is not usable is refused, naming it.
 * No `clients` in holdfast.yaml: every registration is removed, stored advertisements are kept.
 */
import fs from 'node:fs'
import fsp from 'node:fs/promises'
import path from 'node:path'
import { assertName, checkName, isComponent } from '../core/naming'
import type { HoldfastConfig } from '../store/config'

export const clientDir = (home: string, client: string): string =>
  path.join(home, 'clients', assertName('client', client))

const registrationDir = (home: string, client: string): string =>
  path.join(clientDir(home, client), 'workspaces')

/** Every name in the `clients` section, refused with one sentence naming the key when unusable. */
function checkClientNames(config: HoldfastConfig): void {
  for (const [client, spec] of Object.entries(config.clients ?? {})) {
    const bad = checkName('client', client)
    if (bad !== undefined) throw new Error(`holdfast.yaml: clients: ${bad}`)
    for (const ws of spec.workspaces ?? []) {
      const badWs = checkName('workspace', ws)
      if (badWs !== undefined) throw new Error(`holdfast.yaml: clients.${client}.workspaces: ${badWs}`)
    }
  }
}

/** Write the YAML lists into the registration files, removing those the lists no longer name. */
export async function syncRegistrations(home: string, config: HoldfastConfig): Promise<void> {
  checkClientNames(config)
  const declared = config.clients ?? {}
  // Only a client's directory is holdfast's: a plain file someone left there is not touched.
  let present: string[] = []
  try {
    const entries = await fsp.readdir(path.join(home, 'clients'), { withFileTypes: true })
    present = entries.filter((e) => e.isDirectory()).map((e) => e.name)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
  }
  for (const client of present) {
    if (!Object.hasOwn(declared, client) && checkName('client', client) === undefined) {
      await fsp.rm(registrationDir(home, client), { recursive: true, force: true })
    }
  }
  for (const [client, spec] of Object.entries(declared)) {
    const dir = registrationDir(home, client)
    await fsp.mkdir(dir, { recursive: true })
    const wanted = new Set(spec.workspaces ?? [])
    for (const ws of await fsp.readdir(dir)) {
      if (!wanted.has(ws)) await fsp.rm(path.join(dir, ws), { recursive: true, force: true })
    }
    for (const ws of wanted) await fsp.writeFile(path.join(dir, ws), '', { flag: 'a' })
  }
}

/** The client is registered in `ws` (its file exists). Unusable names are never registered. */
export function isRegistered(home: string, client: string, ws: string): boolean {
  if (checkName('client', client) !== undefined || !isComponent(ws)) return false
  return fs.existsSync(path.join(registrationDir(home, client), ws))
}

/** The workspaces the client is registered in, sorted; none when its directory is absent. */
export function registeredWorkspaces(home: string, client: string): string[] {
  try {
    return fs.readdirSync(registrationDir(home, client)).sort()
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw err
  }
}
