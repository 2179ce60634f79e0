/**
 * In-memory state of each agent the server has seen: the lock that makes numbering, reading the
 * previous record and writing the new one one critical section, the numbering, and the commit
 * chain. Invariant: steps of one agent get contiguous numbers and are committed in step order.
 * (The previous record the hold reads lives with the record: record/previous.)
 */
import { HoldfastError } from '../core/errors'
import { formatStep } from '../core/naming'
import type { CommitJob } from '../record/commit/job'
import type { FinishSummary } from '../record/finish'
import { Mutex } from '../core/mutex'
import { readJournal } from '../record/journal/reader'
import { pendingJobs } from '../record/recover'
import { reserveLost, reservedUpTo } from '../record/recover/quarantine'
import { highestTold } from './numbering'
import type { HoldfastConfig } from '../store/config'
import type { Committer } from '../record/commit/committer'
import type { Workspace } from '../store/workspace'
import type { Logger } from '../process/log'

/**
 * The answered steps of a server whose commit has not landed yet, all agents together. While `limit` are
 * waiting, a new step waits before it is numbered: under a load the commit worker cannot keep up
 * with, answers slow to its pace instead of the backlog (and the memory it holds, and the lag before
 * a step is on its branch) growing without bound.
 */
export class CommitBacklog {
  private count = 0
  private readonly waiting: (() => void)[] = []
  constructor(readonly limit: number) {}
  get size(): number {
    return this.count
  }
  /** Resolves when a new step may go (at once, undefined, when there is room and no one waits). */
  room(): Promise<void> | undefined {
    if (this.count < this.limit && this.waiting.length === 0) return undefined
    return new Promise((resolve) => this.waiting.push(resolve))
  }
  add(): void {
    this.count++
  }
  /** A commit landed or failed for good: the longest waiting step may go. */
  done(): void {
    this.count--
    if (this.count < this.limit) this.waiting.shift()?.()
  }
}

export class AgentState {
  readonly lock = new Mutex()
  /** The number the next step takes; set by `init`. */
  next = 0
  /** Highest step committed on the branch. */
  committed = 0
  /** Settles when every queued commit has landed (or failed). */
  private chain: Promise<void> = Promise.resolve()
  /** Settles when every queued commit has been handed to the committer, in step order. */
  private submitted: Promise<unknown> = Promise.resolve()
  /** Steps queued whose commit has not landed (or failed) yet. */
  private readonly queued = new Set<number>()
  /** Set when a commit failed for good: later steps stay in the journal until a restart recovers them. */
  stalled: Error | undefined
  /**
   * Answered steps whose answer the journal could not take (a full disk): kept only in memory for
   * their commit, so lost if the process stops before it lands. By step, the journal's error.
   */
  readonly answersInMemory = new Map<number, string>()
  /** The provider's id of the latest finished step's answer (a `diagnostics: add` row names it). */
  lastAnswer: { n: number; id: string } | undefined
  /** Settles once the latest recorded step's finish was summed up (its answer id known, or none). */
  lastFinish: Promise<unknown> | undefined
  private initialized: Promise<void> | undefined

  constructor(
    readonly ws: Workspace,
    readonly name: string,
    private readonly log: Logger,
    private readonly committer: Committer,
    /** Merge the workspace's packs, once quiet, after this many step commits (0: never). */
    private readonly maintainAfter = 0,
    private readonly backlog?: CommitBacklog,
    /** holdfast.yaml `prices`, to finish steps a crash or a fault left in the journal. */
    private readonly prices?: HoldfastConfig['prices'],
  ) {}

  /** Called when step `n` (and every step before it) is committed, as `commit`. */
  onCommitted: (n: number, commit: string) => void = () => undefined

  /** The key of this agent among all a server has seen (`<ws>\0<agent>`). */
  get key(): string {
    return `${this.ws.name}\0${this.name}`
  }

  /**
   * Number from the journal and the branch, whichever is further (the journal may be pruned). A
   * start that fails (the workspace cannot be created, the journal cannot be read: a full or
   * read-only disk) refuses the step with RECORD_WRITE_FAILED and is tried again by the next one.
   */
  init(): Promise<void> {
    this.initialized ??= (async () => {
      try {
        await this.ws.ensure()
        // Any number the journal gave out counts, a damaged frame's included: none is given twice.
        const read = readJournal(this.journalDir)
        this.committed = await this.ws.committedSteps(this.name)
        // A number quarantine names (damaged, or kept aside by an older holdfast) is not given again,
        // nor one anything else says was given (live/numbering: push.json, the remote's copy, the
        // reflog, the journal's file names): a cut that took local commits must not number new
        // steps over them (over the remote's copies they would diverge from it for good).
        const reserved = reservedUpTo(this.ws, this.name)
        const told = await highestTold(this.ws, this.name, this.journalDir)
        this.next = Math.max(this.committed, read.highest, reserved, told.n) + 1
        const known = Math.max(this.committed, read.highest, reserved)
        if (told.n > known) {
          const why = `${told.by.join(', ')}, but this machine's branch ends at ${formatStep(this.committed)} (a power cut took the rest)`
          reserveLost(this.ws, this.name, known + 1, told.n, why)
          this.log.warn(
            { ws: this.ws.name, agent: this.name, committed: this.committed, told: told.n },
            `${this.ws.name}/${this.name}: ${why}; new steps are numbered from ${formatStep(told.n + 1)} (what the remote holds stays there: holdfast remote show says how the histories stand)`,
          )
        }
        // Steps a fault kept from their commit at start go first, in order, before any new one.
        for (const job of pendingJobs(this.name, read, this.committed, this.prices))
          void this.queueCommit(job.n, Promise.resolve(job))
      } catch (err) {
        this.initialized = undefined
        throw new HoldfastError(
          'RECORD_WRITE_FAILED',
          `the records of ${this.ws.name}/${this.name} cannot be opened (${(err as Error).message}); nothing was sent`,
          { cause: err },
        )
      }
    })()
    return this.initialized
  }

  /** Where this agent's journal files are. */
  get journalDir(): string {
    return (this.dir ??= this.ws.agentJournal(this.name))
  }
  private dir: string | undefined

  /**
   * Run `fn` with the next step number under the agent's lock: numbering, reading the previous
   * record and writing this one are one critical section. The number is taken only when `fn`
   * returns (a refused step leaves no gap).
   */
  async critical<T>(fn: (n: number) => T | Promise<T>): Promise<T> {
    this.busy++ // counted at once: an agent being numbered is never forgotten under it
    try {
      await this.init()
      return await this.lock.run(async () => {
        const n = this.next
        const out = await fn(n)
        this.next = n + 1
        return out
      })
    } finally {
      this.busy--
      this.lastUsed = Date.now()
    }
  }

  /** Sections running, or waiting for the lock (critical, requeue). */
  private busy = 0
  /** When the agent last numbered a step or saw a commit land (ms since the epoch). */
  private lastUsed = Date.now()

  /**
   * Whether the agent has been idle since `now - idleMs`: nothing being numbered, no commit queued
   * or in flight. An idle agent may be forgotten (its state is all on disk: the next step reads it).
   */
  idleFor(idleMs: number, now = Date.now()): boolean {
    return this.busy === 0 && this.queued.size === 0 && now - this.lastUsed >= idleMs
  }

  /**
   * Queue step `n`'s commit: it is submitted once `finished` settles and every earlier step was
   * submitted, so the committer receives an agent's steps in order (it keeps that order, batches,
   * and waits out a disk fault). `onFinished` hears the finish's summary. Returns a promise
   * settling when the commit has landed (with its id), or failed for good (undefined: then this
   * agent's later steps stay in the journal until `holdfast recover` or a restart commits them).
   */
  queueCommit(
    n: number,
    finished: Promise<CommitJob>,
    onFinished?: (summary: FinishSummary) => void,
  ): Promise<string | undefined> {
    this.queued.add(n)
    const submitted = this.submitted.then(() => finished.catch(() => undefined))
    this.submitted = submitted
    // Counted from the answer (finish) to the landing: a step still in flight upstream is not backlog.
    let counted = false
    finished.then(
      () => {
        counted = true
        this.backlog?.add()
      },
      () => undefined,
    )
    const landed = submitted.then(async (job): Promise<string | undefined> => {
      if (this.stalled) return undefined
      if (!job) {
        // The pipeline always settles a step's commit; this is a bug, kept to the journal.
        this.stalled = new Error(`step ${formatStep(n)} was never finished`)
        this.log.error({ ws: this.ws.name, agent: this.name, step: formatStep(n) }, String(this.stalled))
        return undefined
      }
      const t0 = Date.now()
      let commit: string
      try {
        commit = await this.committer.commit(this.ws.home, this.ws.name, job, {
          maintainAfter: this.maintainAfter,
          onFinished,
        })
      } catch (err) {
        this.stalled ??= err instanceof Error ? err : new Error(String(err))
        this.log.error(
          { ws: this.ws.name, agent: this.name, step: formatStep(n), err: String(err) },
          "commit failed; this agent's later steps stay in the journal until holdfast recover or a restart commits them",
        )
        return undefined
      }
      this.log.debug(
        { ws: this.ws.name, agent: this.name, step: formatStep(n), ms: Date.now() - t0 },
        'committed',
      )
      this.committed = Math.max(this.committed, n)
      this.answersInMemory.delete(n)
      this.onCommitted(this.committed, commit)
      return commit
    })
    void landed.finally(() => {
      this.queued.delete(n)
      this.lastUsed = Date.now()
      if (counted) this.backlog?.done()
    })
    this.chain = Promise.all([this.chain, landed]).then(() => undefined)
    return landed
  }

  /**
   * Queue again, in order, every journal step not on the branch (`holdfast recover`): a commit that
   * failed for good left them there. A step queued twice is committed once (the committer skips a
   * step its branch has).
   */
  async requeue(): Promise<number> {
    this.busy++
    try {
      return await this.requeueLocked()
    } finally {
      this.busy--
    }
  }

  private async requeueLocked(): Promise<number> {
    await this.init()
    return this.lock.run(async () => {
      this.stalled = undefined
      this.committed = await this.ws.committedSteps(this.name)
      // A step still on its way (forwarding, or queued) is not taken from the journal half-done.
      const jobs = pendingJobs(this.name, readJournal(this.journalDir), this.committed, this.prices).filter(
        (j) => !this.queued.has(j.n),
      )
      for (const job of jobs) void this.queueCommit(job.n, Promise.resolve(job))
      return jobs.length
    })
  }

  /** Settles when every queued commit has run. */
  drained(): Promise<void> {
    return this.chain
  }
}
