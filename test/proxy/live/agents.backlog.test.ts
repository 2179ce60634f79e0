/**
 * agents: the commit backlog. A server counts its answered steps whose commit has not landed; while
 * the limit are, a new step waits before it is numbered, and each landing lets the longest waiting
 * one go. A step is counted from its finish (not while it is in flight upstream) to its landing.
 */
import fs from 'node:fs'
import { AgentState, CommitBacklog } from '../../../proxy/live/agents'
import { silentLogger } from '../../../proxy/process/log'
import type { CommitJob } from '../../../proxy/record'
import type { Committer } from '../../../proxy/record/commit/committer'
import { Workspace } from '../../../proxy/store/workspace'
import { tempHome } from '../../support/harness'

const settled = async <T>(p: Promise<T> | undefined): Promise<boolean> => {
  if (p === undefined) return true
  let done = false
  void p.then(() => (done = true))
  await new Promise((r) => setImmediate(r))
  return done
}

describe('CommitBacklog', () => {
  it('lets steps go at once under the limit, holds them at it, and frees one per landing in arrival order', async () => {
    const b = new CommitBacklog(2)
    expect(b.room()).toBeUndefined()
    b.add()
    b.add()
    const first = b.room()
    const second = b.room()
    expect(await settled(first)).toBe(false)
    b.done()
    expect([await settled(first), await settled(second)]).toEqual([true, false])
    // A newcomer queues behind the one still waiting, though a slot is free.
    const third = b.room()
    expect(await settled(third)).toBe(false)
    b.add() // the first step is numbered
    b.done()
    expect([await settled(second), await settled(third)]).toEqual([true, false])
    b.add()
    b.done()
    expect(await settled(third)).toBe(true)
    expect(b.size).toBe(1)
  })
})

describe('AgentState.queueCommit and the backlog', () => {
  let home: string
  beforeEach(() => {
    home = tempHome()
  })
  afterEach(() => fs.rmSync(home, { recursive: true, force: true }))

  /** A committer whose commits land when the test says (the seam the backlog counts across). */
  function heldCommitter(): Committer & { land: () => void } {
    const landings: (() => void)[] = []
    return {
      commit: () => new Promise<string>((resolve) => landings.push(() => resolve('0'.repeat(40)))),
      maintain: async () => undefined,
      memory: async () => undefined,
      faults: async () => [],
      retry: async () => undefined,
      close: async () => undefined,
      land: () => landings.shift()?.(),
    }
  }
  const job = (n: number): CommitJob => ({
    agent: 'a',
    n,
    model: null,
    request: {
      file: '/nonexistent',
      meta: { offset: 0, length: 0 },
      request: { offset: 0, length: 0 },
      chunks: [],
    },
  })

  it('counts a step from its finish to its landing, never while it is in flight, nor one whose finish failed', async () => {
    const backlog = new CommitBacklog(8)
    const committer = heldCommitter()
    const agent = new AgentState(new Workspace(home, 'w'), 'a', silentLogger(), committer, 0, backlog)
    let finish!: (j: CommitJob) => void
    const landed = agent.queueCommit(1, new Promise<CommitJob>((r) => (finish = r)))
    let fail!: (err: Error) => void
    const failedLanded = agent.queueCommit(2, new Promise<CommitJob>((_, reject) => (fail = reject)))
    await new Promise((r) => setImmediate(r))
    expect(backlog.size).toBe(0)
    finish(job(1))
    await new Promise((r) => setImmediate(r))
    expect(backlog.size).toBe(1)
    committer.land()
    await landed
    await new Promise((r) => setImmediate(r))
    expect(backlog.size).toBe(0)
    fail(new Error('the forward failed before finish'))
    await failedLanded
    await new Promise((r) => setImmediate(r))
    expect(backlog.size).toBe(0)
  })
})
