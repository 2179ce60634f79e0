/**
 * Teammates' recorded agents, brought in read-only from the remote: `git fetch` of their
 * `refs/holdfast/<machine>/agents/*` (or `refs/heads/holdfast/<machine>/agents/*`) into this
 * repository's `refs/holdfast/<machine>/agents/*`, and a read view of one machine's agents that
 * `agents`, `steps` and `why` read like a workspace. Invariant: nothing here writes outside
 * `refs/holdfast/`; this machine's own namespace is never fetched over; a view has no journal and
 * is never committed to.
 */
import fs from 'node:fs'
import path from 'node:path'
import { parseConfig } from '../store/config'
import { assertName } from '../core/naming'
import { listRefs } from '../store/git'
import { homePaths } from '../store/home'
import { Workspace } from '../store/workspace'
import { failure, runGitIn } from './git'
import { machineName, parseTeammateRef, REMOTE, TEAMMATES_PREFIX, teammateRefspecs } from './refs'

/** A teammate machine's agents in a workspace, as fetched: read like a workspace, never written. */
export class TeammateWorkspace extends Workspace {
  override readonly journalDir: string

  constructor(
    home: string,
    name: string,
    readonly machine: string,
  ) {
    super(home, name)
    assertName('agent', machine) // one ref component, like an agent name
    // A directory that never exists: a teammate's steps are all committed (pushed), none pending here.
    this.journalDir = path.join(homePaths.workspace(home, name), 'remote', 'teammates-have-no-journal')
  }

  override get agentsPrefix(): string {
    return `${TEAMMATES_PREFIX}${this.machine}/agents/`
  }

  override agentJournal(agent: string): string {
    return path.join(this.journalDir, assertName('agent', agent))
  }

  override ensure(): Promise<void> {
    return Promise.reject(new Error(`${this.machine}'s agents in ${this.name} are read-only`))
  }
}

/**
 * This machine's name for a home: holdfast.yaml's `machine:` when the file exists and says so,
 * else the host name's. Reads only (a command that looks never creates holdfast.yaml).
 */
export function thisMachine(home: string): string {
  const file = homePaths.config(home)
  if (!fs.existsSync(file)) return machineName(undefined)
  return machineName(parseConfig(fs.readFileSync(file, 'utf8'), file).machine)
}

/** Each teammate machine with fetched agents, and its agents, sorted. */
export async function teammates(ws: Workspace, me: string): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>()
  for (const { ref } of await listRefs(ws.repo, TEAMMATES_PREFIX)) {
    const t = parseTeammateRef(ref)
    if (!t || t.machine === me) continue
    out.set(t.machine, [...(out.get(t.machine) ?? []), t.agent].sort())
  }
  return new Map([...out].sort(([a], [b]) => (a < b ? -1 : 1)))
}

export interface TeammatesFetch {
  /** Refs that changed: `<machine>/<agent>` → `new` (came in) or `updated`. */
  changed: { machine: string; agent: string; how: 'new' | 'updated' }[]
  machines: Map<string, string[]>
}

/**
 * Fetch teammates' agents from the remote: one machine's, or every machine's but `me`. Refused
 * (thrown) when the fetch fails; `machine` equal to `me` is refused (this machine's own records
 * are its `agents/*` branches).
 */
export async function fetchTeammates(
  ws: Workspace,
  me: string,
  machine: string | undefined,
  opts: { timeoutMs: number },
): Promise<TeammatesFetch> {
  if (machine !== undefined) {
    assertName('agent', machine)
    if (machine === me)
      throw new Error(`"${machine}" is this machine: its agents are the workspace's own agents/* branches`)
  }
  const before = new Map((await listRefs(ws.repo, TEAMMATES_PREFIX)).map((r) => [r.ref, r.oid]))
  const r = await runGitIn(
    ws.repo.gitdir,
    [
      'fetch',
      '--progress', // with idle: a long fetch that moves is not stopped
      '--no-tags',
      '--no-write-fetch-head',
      '--refmap=',
      REMOTE,
      ...teammateRefspecs(me, machine),
    ],
    { timeoutMs: opts.timeoutMs, idle: true, remote: true },
  )
  if (r.code !== 0) throw new Error(`fetch from ${REMOTE} failed: ${failure(r, opts.timeoutMs)}`)
  const changed: TeammatesFetch['changed'] = []
  for (const { ref, oid } of await listRefs(ws.repo, TEAMMATES_PREFIX)) {
    const t = parseTeammateRef(ref)
    if (!t || t.machine === me || before.get(ref) === oid) continue
    changed.push({ ...t, how: before.has(ref) ? 'updated' : 'new' })
  }
  return { changed, machines: await teammates(ws, me) }
}
