/**
 * In-memory state of each agent the server has seen: the lock that makes numbering, reading the
 * previous record and writing the new one one critical section; the previous step's parsed
 * request (checked against its file, so a 1 MB record is parsed once); and the commit chain.
 * Invariant: steps of one agent get contiguous numbers and are committed in step order.
 */
import fs from 'node:fs'
import path from 'node:path'
import { isObject, type JsonObject } from './core/json'
import { hasLongTtl, RecordFault, type PreviousStep } from './core/hold'
import { formatStep } from './core/naming'
import { journalSteps, readMetaSync, REQUEST_FILE } from './store/journal'
import type { Committer } from './store/committer'
import { fileStamp } from './store/stamp'
import type { Workspace } from './store/workspace'
import type { Logger } from './log'

/** A promise-chain mutex: `run` calls are executed one at a time, in call order. */
export class Mutex {
  private tail: Promise<unknown> = Promise.resolve()
  run<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.tail.then(fn, fn)
    this.tail = next.catch(() => undefined)
    return next
  }
}

/**
 * The previous requests the agents keep in memory, bounded by total bytes over all agents: the
 * least recently used agent's copy is dropped first (it reads its record from disk next time).
 */
export class PreviousCache {
  /** Map order is use order: the first entry is the least recently used. */
  private readonly entries = new Map<AgentState, number>()
  private total = 0

  constructor(readonly budget: number) {}

  /** `agent` now holds a copy of `size` bytes (measured as what it keeps alive). */
  touch(agent: AgentState, size: number): void {
    this.forget(agent)
    if (size > this.budget) {
      agent.cached = undefined
      return
    }
    this.entries.set(agent, size)
    this.total += size
    for (const [other, s] of this.entries) {
      if (this.total <= this.budget) break
      if (other === agent) continue
      this.entries.delete(other)
      this.total -= s
      other.cached = undefined
    }
  }

  forget(agent: AgentState): void {
    const old = this.entries.get(agent)
    if (old === undefined) return
    this.entries.delete(agent)
    this.total -= old
  }

  /** Bytes held now, and by how many agents (health). */
  get held(): { bytes: number; agents: number } {
    return { bytes: this.total, agents: this.entries.size }
  }
}

/** What a kept previous request costs in memory: its bytes and the parsed fields kept beside them. */
const keptSize = (p: PreviousStep): number => 3 * p.bytes.length

export interface CachedPrevious {
  step: number
  previous: PreviousStep
  /** The request file's stamp when it was read (store/stamp). */
  stamp: string
}

export class AgentState {
  readonly lock = new Mutex()
  /** The number the next step takes; set by `init`. */
  next = 0
  /** Highest step committed on the branch. */
  committed = 0
  cached: CachedPrevious | undefined
  /** Settles when every queued commit has landed (or failed). */
  private chain: Promise<void> = Promise.resolve()
  /** Settles when every queued commit has been handed to the committer, in step order. */
  private submitted: Promise<unknown> = Promise.resolve()
  /** Set when a commit failed for good: later steps stay in the journal until a restart recovers them. */
  stalled: Error | undefined
  private initialized: Promise<void> | undefined

  constructor(
    readonly ws: Workspace,
    readonly name: string,
    private readonly log: Logger,
    private readonly committer: Committer,
    /** Run `git gc` on the workspace after this many step commits (0: never). */
    private readonly gcEvery = 0,
    /** The shared memory budget for previous requests (none: unbounded, for tests of one agent). */
    private readonly cache?: PreviousCache,
  ) {}

  /** Number from the journal and the branch, whichever is further (the journal may be pruned). */
  init(): Promise<void> {
    this.initialized ??= (async () => {
      await this.ws.ensure()
      const journal = await journalSteps(this.ws.agentJournal(this.name))
      this.committed = await this.ws.committedSteps(this.name)
      this.next = Math.max(this.committed, journal[journal.length - 1] ?? 0) + 1
    })()
    return this.initialized
  }

  stepDir(n: number): string {
    return this.ws.stepDir(this.name, n)
  }

  /**
   * The previous step's record for the hold: from memory when its file is unchanged, else read
   * from disk. Undefined for a first step or an absent record. Throws RecordFault on a record that
   * does not parse (the hold's rule: surfaced, not sent around).
   */
  previous(step: number, parse: (bytes: Buffer, file: string) => JsonObject): PreviousStep | undefined {
    if (step <= 1) return undefined
    const dir = this.stepDir(step - 1)
    const file = path.join(dir, REQUEST_FILE)
    const stamp = fileStamp(file)
    if (stamp === undefined) return undefined
    const c = this.cached
    if (c && c.step === step - 1 && c.stamp === stamp) {
      this.cache?.touch(this, keptSize(c.previous)) // used again: the most recent now
      return c.previous
    }
    let bytes: Buffer
    try {
      bytes = fs.readFileSync(file)
    } catch (err) {
      // A directory in its place (EISDIR), or an unreadable file: a fault of the record, not "absent".
      throw new RecordFault(file, (err as Error).message)
    }
    const full = parse(bytes, file)
    const parsed = slim(full)
    const meta = readMetaSync(dir)
    const previous: PreviousStep = {
      path: file,
      bytes,
      parsed,
      longTtl: longTtl(bytes, full),
      sentAt: meta ? Date.parse(meta.started_at) : fs.statSync(file).mtimeMs,
      headers: meta?.cache_keying_headers ?? {},
      status: meta?.status ?? undefined,
    }
    this.cached = { step: step - 1, previous, stamp }
    this.cache?.touch(this, keptSize(previous))
    return previous
  }

  /** Remember the request just recorded as the next step's previous. */
  remember(step: number, previous: PreviousStep): void {
    previous = {
      ...previous,
      parsed: slim(previous.parsed),
      longTtl: previous.longTtl ?? longTtl(previous.bytes, previous.parsed),
    }
    this.cached = { step, previous, stamp: fileStamp(previous.path) ?? '' }
    this.cache?.touch(this, keptSize(previous))
  }

  /** The provider answered step `n` with `status` (the hold refuses to hold after a 4xx). */
  answered(n: number, status: number | undefined): void {
    if (this.cached?.step === n) this.cached.previous = { ...this.cached.previous, status }
  }

  /**
   * Queue step `n`'s commit: it is submitted once `finished` settles and every earlier step was
   * submitted, so the committer receives an agent's steps in order (it keeps that order, batches,
   * and retries a branch it cannot move). Returns a promise settling when the commit has landed,
   * or failed for good (then this agent's later steps stay in the journal until a restart).
   */
  queueCommit(n: number, finished: Promise<unknown>, model: string | null): Promise<void> {
    const submitted = this.submitted.then(() => finished.catch(() => undefined))
    this.submitted = submitted
    const landed = submitted.then(async () => {
      if (this.stalled) return
      const t0 = Date.now()
      try {
        await this.committer.commit(this.ws.home, this.ws.name, this.name, n, model)
      } catch (err) {
        this.stalled ??= err instanceof Error ? err : new Error(String(err))
        this.log.error(
          { ws: this.ws.name, agent: this.name, step: formatStep(n), err: String(err) },
          "commit failed; this agent's later steps stay in the journal until holdfast restarts",
        )
        return
      }
      this.log.debug(
        { ws: this.ws.name, agent: this.name, step: formatStep(n), ms: Date.now() - t0 },
        'committed',
      )
      this.committed = Math.max(this.committed, n)
      this.maybeMaintain()
    })
    this.chain = Promise.all([this.chain, landed]).then(() => undefined)
    return landed
  }

  /** Schedule `git gc` off the request path every `gcEvery` commits of the workspace. */
  private maybeMaintain(): void {
    if (this.gcEvery <= 0 || ++this.ws.commitsSinceMaintain < this.gcEvery) return
    this.ws.commitsSinceMaintain = 0
    const t0 = Date.now()
    this.committer.maintain(this.ws.home, this.ws.name).then(
      () => this.log.info({ ws: this.ws.name, ms: Date.now() - t0 }, 'packed the workspace repository'),
      (err: unknown) => this.log.warn({ ws: this.ws.name, err: String(err) }, 'git gc failed'),
    )
  }

  /** Settles when every queued commit has run. */
  drained(): Promise<void> {
    return this.chain
  }
}

/**
 * What the hold reads of a previous request: every top-level field but the transcript, of which
 * only the leading system/developer messages and the first message after them (the head). A long
 * conversation's parsed transcript would otherwise stay in memory once per agent.
 */
export function slim(parsed: JsonObject): JsonObject {
  const messages = parsed.messages
  if (!Array.isArray(messages)) return parsed
  let i = 0
  while (i < messages.length) {
    const m = messages[i]
    if (!isObject(m) || (m.role !== 'system' && m.role !== 'developer')) break
    i++
  }
  return i + 1 >= messages.length ? parsed : { ...parsed, messages: messages.slice(0, i + 1) }
}

/** The 1 h cache lifetime is asked for: looked for in the full request once, cheaply (a byte search first). */
function longTtl(bytes: Buffer, parsed: JsonObject): boolean {
  return bytes.includes('"1h"') && hasLongTtl(parsed)
}
