/**
 * store/commit-worker: the worker thread itself, spoken to with its own messages. Covers: steps
 * that arrive together are committed as one pack, each its own commit in order, every message
 * answered by its id; a finish is answered at once, never queued behind commits; a step whose
 * finish was lost is answered with an error naming it; a maintain runs between a workspace's
 * commits in the order asked, never beside one, and merges its packs; a failure is answered with
 * the error's name and message.
 */
import fs from 'node:fs'
import path from 'node:path'
import { Worker } from 'node:worker_threads'
import { PACKAGE_ROOT, SOURCE_REGISTER } from '../../../proxy/package-root'
import type { CommitReply, CommitRequest } from '../../../proxy/store/commit-worker'
import type { CommitJob } from '../../../proxy/record'
import { finishStep } from '../../../proxy/record/finish'
import { Workspace } from '../../../proxy/store/workspace'
import { journalSteps, MODEL } from './commit.support'
import { git, packFiles, tempDir } from './git.support'

/** The worker, and the replies by id in the order they came. */
class Port {
  readonly worker = new Worker(path.join(PACKAGE_ROOT, 'proxy', 'store', 'commit-worker.ts'), {
    execArgv: ['-r', SOURCE_REGISTER],
  })
  readonly order: number[] = []
  /** How many replies each message from the worker carried. */
  readonly messages: number[] = []
  private readonly waiting = new Map<number, (r: CommitReply) => void>()
  private nextId = 1
  constructor() {
    this.worker.on('message', (rs: CommitReply[]) => {
      this.messages.push(rs.length)
      for (const r of rs) {
        this.order.push(r.id)
        this.waiting.get(r.id)?.(r)
        this.waiting.delete(r.id)
      }
    })
  }
  id(): number {
    return this.nextId++
  }
  /** Post `m` (its id already set); resolves with its reply. */
  post(m: CommitRequest): Promise<CommitReply> {
    return this.postAll([m])[0] as Promise<CommitReply>
  }
  /** Post `ms` as one message, as the committer does; resolves each with its reply. */
  postAll(ms: CommitRequest[]): Promise<CommitReply>[] {
    const replies = ms.map((m) => new Promise<CommitReply>((resolve) => this.waiting.set(m.id, resolve)))
    this.worker.postMessage(ms)
    return replies
  }
}

let port: Port
beforeAll(() => {
  port = new Port()
})
afterAll(() => port.worker.terminate())

let home: string
let ws: Workspace
beforeEach(async () => {
  home = tempDir('holdfast-worker-')
  ws = new Workspace(home, 'w')
  await ws.ensure()
})
afterEach(() => fs.rmSync(home, { recursive: true, force: true }))

/** Post step `job`'s commit to workspace `w` of `home` (a fresh id unless given); resolves with its reply. */
const commit = (job: CommitJob, id = port.id()): Promise<CommitReply> =>
  port.post({ kind: 'commit', id, home, ws: 'w', job, maintainAfter: 0 })

const valueOf = (r: CommitReply): unknown => {
  if ('error' in r) throw new Error(`the worker answered ${r.error.name}: ${r.error.message}`)
  return r.value
}

describe('the commit worker', () => {
  it('commits steps that arrive together as one pack, each its own commit in order, answering each by id', async () => {
    const steps = journalSteps(home, 'w', [
      { agent: 'a', n: 1 },
      { agent: 'a', n: 2 },
      { agent: 'b', n: 1 },
    ])
    const summaries = await Promise.all(
      steps.map((s) => port.post({ kind: 'finish', id: port.id(), job: s.finish })),
    )
    expect(
      summaries.map((r) => (valueOf(r) as { usage: { output_tokens: number } }).usage.output_tokens),
    ).toEqual([1, 2, 1])
    const before = packFiles(ws.repo.gitdir).length
    const ids = steps.map(() => port.id())
    const replies = await Promise.all(steps.map((s, i) => commit(s.commit, ids[i] as number)))
    expect(replies.map((r) => r.id)).toEqual(ids)
    const oids = replies.map((r) => valueOf(r) as string)
    expect(packFiles(ws.repo.gitdir)).toHaveLength(before + 1)
    expect(git(ws.repo.gitdir, 'rev-list', '--parents', '-1', 'agents/a').trim()).toBe(
      `${oids[1]} ${oids[0]}`,
    )
    expect(git(ws.repo.gitdir, 'rev-parse', 'agents/b').trim()).toBe(oids[2])
    expect(git(ws.repo.gitdir, 'log', '--format=%s', '-2', 'agents/a').trim().split('\n')).toEqual([
      `step 002: ${MODEL} [a]`,
      `step 001: ${MODEL} [a]`,
    ])
    expect(git(ws.repo.gitdir, 'show', `${oids[2]}:steps/b/001/response.json`)).toBe(steps[2]!.answer)
    expect(git(ws.repo.gitdir, 'fsck', '--strict', '--no-dangling')).toBe('')
  })

  it('answers the messages that came as one with one message, and the commits of one batch with one', async () => {
    const steps = journalSteps(home, 'w', [
      { agent: 'a', n: 1 },
      { agent: 'a', n: 2 },
      { agent: 'b', n: 1 },
    ])
    const seen = port.messages.length
    const finishes = await Promise.all(
      port.postAll(steps.map((s) => ({ kind: 'finish', id: port.id(), job: s.finish }))),
    )
    finishes.forEach(valueOf)
    expect(port.messages.slice(seen)).toEqual([3])
    const commits = await Promise.all(
      port.postAll(
        steps.map((s) => ({ kind: 'commit', id: port.id(), home, ws: 'w', job: s.commit, maintainAfter: 0 })),
      ),
    )
    commits.forEach(valueOf)
    expect(port.messages.slice(seen)).toEqual([3, 3])
    expect(await Promise.all(['a', 'b'].map((a) => ws.committedSteps(a)))).toEqual([2, 1])
  })

  it('commits a backlog in bounded packs (at most 512 steps each), every step its own commit in order', async () => {
    const steps = journalSteps(
      home,
      'w',
      Array.from({ length: 600 }, (_, i) => ({ agent: `a${i % 3}`, n: Math.floor(i / 3) + 1 })),
    )
    await Promise.all(steps.map((s) => port.post({ kind: 'finish', id: port.id(), job: s.finish })))
    const before = packFiles(ws.repo.gitdir).length
    const replies = await Promise.all(steps.map((s) => commit(s.commit)))
    replies.forEach(valueOf)
    expect(packFiles(ws.repo.gitdir)).toHaveLength(before + 2)
    expect(await Promise.all(['a0', 'a1', 'a2'].map((a) => ws.committedSteps(a)))).toEqual([200, 200, 200])
  })

  it('answers a finish at once, ahead of a commit of its workspace that was asked for first', async () => {
    const [s1, s2] = journalSteps(home, 'w', [
      { agent: 'a', n: 1 },
      { agent: 'a', n: 2 },
    ])
    const commitId = port.id()
    const finishId = port.id()
    const committed = commit({ ...s1!.commit, finished: finishStep(s1!.finish) }, commitId)
    const finished = port.post({ kind: 'finish', id: finishId, job: s2!.finish })
    await Promise.all([committed, finished])
    expect(port.order.indexOf(finishId)).toBeLessThan(port.order.indexOf(commitId))
    expect(valueOf(await finished)).toMatchObject({ status: 200, outcome: 'ok' })
  })

  it('answers a commit whose finish was lost with an error naming the step, and moves nothing', async () => {
    const [s] = journalSteps(home, 'w', [{ agent: 'a', n: 1 }])
    const r = await commit(s!.commit)
    expect(r).toEqual({
      id: r.id,
      error: { name: 'Error', message: 'the finish of step 001 of a was lost (the commit worker restarted)' },
    })
    expect(await ws.committedSteps('a')).toBe(0)
  })

  // Regression: one step whose finish was lost failed the whole batch, so another agent's step
  // committed in the same 20 ms window was refused too and its finished half was lost with it.
  it("fails only the step whose finish was lost: another agent's step in the same batch is committed, the agent's own later step waits in the journal", async () => {
    const [a1, a2, b1] = journalSteps(home, 'w', [
      { agent: 'a', n: 1 },
      { agent: 'a', n: 2 },
      { agent: 'b', n: 1 },
    ])
    for (const s of [a2!, b1!]) valueOf(await port.post({ kind: 'finish', id: port.id(), job: s.finish }))
    const replies = await Promise.all([a1!, b1!, a2!].map((s) => commit(s.commit)))
    expect(replies[0]).toMatchObject({
      error: { message: 'the finish of step 001 of a was lost (the commit worker restarted)' },
    })
    const oid = valueOf(replies[1]!) as string
    expect(git(ws.repo.gitdir, 'rev-parse', 'agents/b').trim()).toBe(oid)
    expect(git(ws.repo.gitdir, 'show', `${oid}:steps/b/001/response.json`)).toBe(b1!.answer)
    // a's step 002 must not land before its step 001: it stays for the next start's recovery.
    expect(replies[2]).toMatchObject({
      error: { message: 'the finish of step 001 of a was lost (the commit worker restarted)' },
    })
    expect(await ws.committedSteps('a')).toBe(0)
  })

  // Regression: a retried commit asked the finished halves again, which its first attempt had taken,
  // so a branch locked for a moment failed its steps with "the finish … was lost".
  it('retries a step whose branch was locked until the lock goes, committing it with its finished half', async () => {
    const [s] = journalSteps(home, 'w', [{ agent: 'a', n: 1 }])
    valueOf(await port.post({ kind: 'finish', id: port.id(), job: s!.finish }))
    const lock = path.join(ws.repo.gitdir, 'refs', 'heads', 'agents', 'a.lock')
    fs.mkdirSync(path.dirname(lock), { recursive: true })
    fs.writeFileSync(lock, '')
    const committed = commit(s!.commit)
    await new Promise((r) => setTimeout(r, 400)) // the first attempts meet the lock
    fs.rmSync(lock)
    const oid = valueOf(await committed) as string
    expect(git(ws.repo.gitdir, 'rev-parse', 'agents/a').trim()).toBe(oid)
    expect(git(ws.repo.gitdir, 'show', `${oid}:steps/a/001/response.json`)).toBe(s!.answer)
  })

  it('runs a maintain between commits in the order asked, merging the packs, and answers every message', async () => {
    const steps = journalSteps(
      home,
      'w',
      [1, 2, 3, 4].map((n) => ({ agent: 'a', n })),
    )
    for (const s of steps.slice(0, 3)) {
      // One batch each: three packs to merge.
      valueOf(await commit({ ...s.commit, finished: finishStep(s.finish) }))
    }
    const before = packFiles(ws.repo.gitdir).length
    const maintainId = port.id()
    const lastId = port.id()
    const [maintained, last] = await Promise.all([
      port.post({ kind: 'maintain', id: maintainId, home, ws: 'w' }),
      commit({ ...steps[3]!.commit, finished: finishStep(steps[3]!.finish) }, lastId),
    ])
    expect(maintained).toEqual({ id: maintainId, value: undefined })
    expect(port.order.indexOf(maintainId)).toBeLessThan(port.order.indexOf(lastId))
    // Merged, then the last step's own pack beside the merged one.
    expect(packFiles(ws.repo.gitdir).length).toBeLessThan(before + 1)
    expect(git(ws.repo.gitdir, 'rev-parse', 'agents/a').trim()).toBe(valueOf(last))
    expect(git(ws.repo.gitdir, 'fsck', '--strict', '--no-dangling')).toBe('')
  })

  it("answers a maintain that fails with the error's name and message", async () => {
    const r = await port.post({ kind: 'maintain', id: port.id(), home, ws: 'nowhere' })
    expect('error' in r && r.error.message).toMatch(/does not exist/)
    expect('error' in r && typeof r.error.name).toBe('string')
  })
})
