/**
 * proxy/tools/registration: `<home>/clients/<client>/workspaces/<ws>` files, in a real temp home.
 * Rules: after a sync the files are exactly holdfast.yaml's lists (extra ones removed, the stored
 * advertisement kept); no `clients` section removes every registration; an unusable client or
 * workspace name is refused naming its key, before anything is written; `isRegistered` never
 * says yes for an unusable name; `registeredWorkspaces` is sorted and empty for an unknown client.
 */
import fs from 'node:fs'
import path from 'node:path'
import type { Client } from '../../../generated/holdfast'
import {
  clientDir,
  isRegistered,
  registeredWorkspaces,
  syncRegistrations,
} from '../../../proxy/tools/registration'
import type { HoldfastConfig } from '../../../proxy/store/config'
import { configWith, tempDir } from './support'

const homes: string[] = []
afterAll(() => homes.forEach((h) => fs.rmSync(h, { recursive: true, force: true })))

function home(): string {
  const h = tempDir()
  homes.push(h)
  return h
}

const host = (workspaces?: string[]): Client => ({
  mcp: { command: 'true' },
  ...(workspaces ? { workspaces } : {}),
})
const files = (h: string, client: string): string[] =>
  fs.readdirSync(path.join(h, 'clients', client, 'workspaces')).sort()

describe('syncRegistrations', () => {
  it('writes one empty file per listed workspace, and removes the ones the list no longer names', async () => {
    const h = home()
    await syncRegistrations(h, configWith({ fx: host(['proj', 'default']), bare: host() }))
    expect(files(h, 'fx')).toEqual(['default', 'proj'])
    expect(files(h, 'bare')).toEqual([])
    expect(fs.readFileSync(path.join(h, 'clients', 'fx', 'workspaces', 'proj'), 'utf8')).toBe('')

    await syncRegistrations(h, configWith({ fx: host(['proj', 'later']), bare: host() }))
    expect(files(h, 'fx')).toEqual(['later', 'proj'])
    expect(registeredWorkspaces(h, 'fx')).toEqual(['later', 'proj'])
  })

  it("removes an undeclared client's registrations but keeps its stored advertisement", async () => {
    const h = home()
    await syncRegistrations(h, configWith({ fx: host(['default']), gone: host(['default']) }))
    const ad = path.join(clientDir(h, 'gone'), 'tools.json')
    fs.writeFileSync(ad, '{"kept":true}')
    await syncRegistrations(h, configWith({ fx: host(['default']) }))
    expect(fs.existsSync(path.join(h, 'clients', 'gone', 'workspaces'))).toBe(false)
    expect(fs.readFileSync(ad, 'utf8')).toBe('{"kept":true}')
    expect(isRegistered(h, 'gone', 'default')).toBe(false)
    expect(isRegistered(h, 'fx', 'default')).toBe(true)
  })

  it('removes every registration when holdfast.yaml has no clients section', async () => {
    const h = home()
    await syncRegistrations(h, configWith({ a: host(['w1']), b: host(['w2']) }))
    const none: HoldfastConfig = { ...configWith({}), clients: undefined }
    await syncRegistrations(h, none)
    expect([isRegistered(h, 'a', 'w1'), isRegistered(h, 'b', 'w2')]).toEqual([false, false])
    expect([registeredWorkspaces(h, 'a'), registeredWorkspaces(h, 'b')]).toEqual([[], []])
  })

  it('also syncs a home that has no clients directory yet', async () => {
    const h = home()
    await syncRegistrations(h, configWith({}))
    await syncRegistrations(h, configWith({ fx: host(['default']) }))
    expect(isRegistered(h, 'fx', 'default')).toBe(true)
  })

  it('refuses an unusable client or workspace name, naming its key, and writes nothing', async () => {
    const h = home()
    await expect(syncRegistrations(h, configWith({ ok: host(['w']), 'a b': host(['w']) }))).rejects.toThrow(
      /^holdfast\.yaml: clients: client name "a b" is not usable/,
    )
    await expect(syncRegistrations(h, configWith({ ok: host(['w', '-x']) }))).rejects.toThrow(
      /^holdfast\.yaml: clients\.ok\.workspaces: workspace name "-x" is not usable/,
    )
    expect(fs.existsSync(path.join(h, 'clients'))).toBe(false)
  })

  it('leaves alone an entry of the clients directory that is not a usable client name', async () => {
    const h = home()
    const odd = path.join(h, 'clients', '.hidden', 'workspaces')
    fs.mkdirSync(odd, { recursive: true })
    fs.writeFileSync(path.join(odd, 'w'), '')
    await syncRegistrations(h, configWith({ fx: host(['w']) }))
    expect(fs.existsSync(path.join(odd, 'w'))).toBe(true)
  })

  // Regression: a plain file with a usable client name made the sync, and serve's start, fail with ENOTDIR.
  it('leaves alone a plain file in the clients directory, and still registers the declared clients', async () => {
    const h = home()
    fs.mkdirSync(path.join(h, 'clients'), { recursive: true })
    fs.writeFileSync(path.join(h, 'clients', 'notes.txt'), 'mine')
    await syncRegistrations(h, configWith({ fx: host(['w']) }))
    expect(fs.readFileSync(path.join(h, 'clients', 'notes.txt'), 'utf8')).toBe('mine')
    expect(isRegistered(h, 'fx', 'w')).toBe(true)
  })
})

describe('isRegistered and registeredWorkspaces', () => {
  it('never calls an unusable client or workspace name registered, even where a path exists', async () => {
    const h = home()
    await syncRegistrations(h, configWith({ fx: host(['default']) }))
    // "." and "" resolve to the workspaces directory itself, which exists
    expect([isRegistered(h, 'fx', '.'), isRegistered(h, 'fx', ''), isRegistered(h, 'fx', '..')]).toEqual([
      false,
      false,
      false,
    ])
    expect(isRegistered(h, '../clients/fx', 'default')).toBe(false)
    expect(isRegistered(h, 'fx', 'default')).toBe(true)
    expect(isRegistered(h, 'nobody', 'default')).toBe(false)
  })

  it('answers no workspaces for a client that has no directory, and refuses an unusable name as BAD_NAME', () => {
    const h = home()
    expect(registeredWorkspaces(h, 'never')).toEqual([])
    expect(() => clientDir(h, '..')).toThrow(expect.objectContaining({ code: 'BAD_NAME' }))
    expect(() => registeredWorkspaces(h, 'a/b')).toThrow(expect.objectContaining({ code: 'BAD_NAME' }))
  })
})
