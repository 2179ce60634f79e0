/**
 * Loaded sets on disk: `<home>/loaded/<ws>/<agent>.json`, one file per agent (DESIGN §3, §7).
 * Invariant: reading never fails (absent, unreadable, malformed or an unusable address reads as
 * the empty set) and a write replaces the file atomically with a set that reads back as written.
 * Reads run on every proxied request, so a decoded set is cached until the file's stat changes.
 * Every write in this process is announced on `loadedSetChanges` (the MCP endpoint tells the
 * agent's open sessions).
 */
import { EventEmitter } from 'node:events'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

import { HoldfastError } from '../core/errors'
import type { Json } from '../core/json'
import { decodeLoadedSet, encodeLoadedSet, unionLoaded } from '../core/loaded-set'
import type { Decoded, LoadedEntry } from '../core/loaded-set'
import { isComponent } from '../core/naming'
import { writeFileAtomic } from './atomic'
import { fileStamp } from './config/stamp'

/** The loaded set's file, or undefined when workspace or agent is not one path component. */
export function loadedSetPath(home: string, workspace: string, agent: string): string | undefined {
  if (!isComponent(workspace) || !isComponent(agent)) return undefined
  return join(home, 'loaded', workspace, `${agent}.json`)
}

/** A loaded set this process wrote: `{home, workspace, agent}`. */
export interface LoadedSetChange {
  home: string
  workspace: string
  agent: string
}

/** Emits `changed` with a LoadedSetChange after each write of a loaded set. */
export const loadedSetChanges = new EventEmitter<{ changed: [LoadedSetChange] }>()

interface Cached {
  /** The file's stamp when it was read (store/config/stamp). */
  stamp: string
  /** Deep-frozen; handed out as a fresh array of the same frozen entries. */
  entries: readonly LoadedEntry[]
}

const cache = new Map<string, Cached>()

function deepFreeze<T>(v: T): T {
  if (typeof v === 'object' && v !== null && !Object.isFrozen(v)) {
    Object.freeze(v)
    for (const item of Object.values(v) as unknown[]) deepFreeze(item)
  }
  return v
}

/**
 * What this agent has loaded, in stored order; `[]` when there is nothing usable to read. One
 * `stat` per call; the file is read and decoded again only when its inode, size, mtime or ctime
 * changed. The array is the caller's own; its entries are frozen and shared.
 */
export function readLoadedSet(home: string, workspace: string, agent: string): LoadedEntry[] {
  const file = loadedSetPath(home, workspace, agent)
  if (file === undefined) return []
  let stamp: string | undefined
  try {
    stamp = fileStamp(file)
  } catch {
    stamp = undefined // unreadable reads as empty, like absent
  }
  if (stamp === undefined) {
    cache.delete(file)
    return []
  }
  const hit = cache.get(file)
  if (hit?.stamp === stamp) return hit.entries.slice()
  let entries: readonly LoadedEntry[] = []
  try {
    const decoded = decodeLoadedSet(JSON.parse(readFileSync(file, 'utf8')))
    if (decoded.ok) entries = deepFreeze(decoded.value)
  } catch {
    entries = [] // a directory in its place, or not JSON: empty, as the design says
  }
  cache.set(file, { stamp, entries })
  return entries.slice()
}

function usablePath(home: string, workspace: string, agent: string): string {
  const file = loadedSetPath(home, workspace, agent)
  if (file === undefined) {
    throw new HoldfastError(
      'BAD_NAME',
      `unusable address ${JSON.stringify(workspace)}/${JSON.stringify(agent)}: workspace and agent must each be one path component (non-empty, not "." or "..", no "/", "\\" or NUL)`,
    )
  }
  return file
}

/** Writes to one file run one after another in this process, so an add never loses another. */
const queues = new Map<string, Promise<void>>()

function serialized<T>(file: string, job: () => Promise<T>): Promise<T> {
  const run = (queues.get(file) ?? Promise.resolve()).then(job)
  const tail = run.then(
    () => undefined,
    () => undefined,
  )
  queues.set(file, tail)
  void tail.then(() => {
    if (queues.get(file) === tail) queues.delete(file)
  })
  return run
}

/** Sorted by presented name, checked to read back as written, then replaced atomically. */
async function store(
  at: LoadedSetChange,
  file: string,
  entries: readonly LoadedEntry[],
): Promise<LoadedEntry[]> {
  const sorted = unionLoaded([], entries)
  const encoded: Json = encodeLoadedSet(entries)
  const check = decodeLoadedSet(encoded)
  if (!check.ok) throw new Error(`refusing to write the loaded set ${file}: ${check.error}`)
  await writeFileAtomic(file, `${JSON.stringify(encodeLoadedSet(sorted), null, 2)}\n`)
  cache.delete(file)
  loadedSetChanges.emit('changed', at)
  return sorted
}

/**
 * Add `entries` to this agent's set (union by presented name, later wins, sorted) and answer the
 * whole set as written. Rejects, writing nothing, for an unusable address.
 */
export async function addToLoadedSet(
  home: string,
  workspace: string,
  agent: string,
  entries: readonly LoadedEntry[],
): Promise<LoadedEntry[]> {
  const file = usablePath(home, workspace, agent)
  return serialized(file, () =>
    store({ home, workspace, agent }, file, unionLoaded(readLoadedSet(home, workspace, agent), entries)),
  )
}

/** Replace this agent's set with `entries` (what an unload leaves; may be empty). Rejects, writing nothing, for an unusable address. */
export async function writeLoadedSet(
  home: string,
  workspace: string,
  agent: string,
  entries: readonly LoadedEntry[],
): Promise<void> {
  const file = usablePath(home, workspace, agent)
  await serialized(file, () => store({ home, workspace, agent }, file, entries))
}

/**
 * Read, plan and write this agent's set as one act, after every earlier write of it: `plan` sees
 * the set as it is now and answers the set to write, or a refusal (then nothing is written).
 */
export async function updateLoadedSet(
  home: string,
  workspace: string,
  agent: string,
  plan: (current: LoadedEntry[]) => Decoded<LoadedEntry[]>,
): Promise<Decoded<LoadedEntry[]>> {
  const file = usablePath(home, workspace, agent)
  return serialized(file, async () => {
    const next = plan(readLoadedSet(home, workspace, agent))
    return next.ok ? { ok: true, value: await store({ home, workspace, agent }, file, next.value) } : next
  })
}
