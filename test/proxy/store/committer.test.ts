/**
 * store/committer: where step commits run. Covers, for the inline committer and the worker one
 * alike: a finished step commits its request, meta and answer as one commit git reads; a step
 * whose finish was lost is refused by name and moves nothing; a job carrying its finished half
 * needs no finish. For the worker: errors cross the thread with their name and message, a worker
 * that dies fails its pending commits and a new one takes the next, and maintain merges packs.
 */
import fs from 'node:fs'
import type { Worker } from 'node:worker_threads'
import { finishStep } from '../../../proxy/record/finish'
import { type Committer, InlineCommitter, WorkerCommitter } from '../../../proxy/store/committer'
import { Workspace } from '../../../proxy/store/workspace'
import { journalSteps, MODEL } from './commit.support'
import { git, packFiles, tempDir } from './git.support'

let home: string
let ws: Workspace
beforeEach(async () => {
  home = tempDir('holdfast-committer-')
  ws = new Workspace(home, 'w')
  await ws.ensure()
})
afterEach(() => fs.rmSync(home, { recursive: true, force: true }))

const show = (rev: string): string => git(ws.repo.gitdir, 'show', rev)

/** What every committer must do; run against each kind. */
function contract(make: () => Committer): void {
  let c: Committer
  beforeAll(() => {
    c = make() // one for the block: a worker is started once
  })
  afterAll(() => c.close())

  it('commits a finished step: its exact request, the finished meta and the answer, on the agent branch', async () => {
    const [s] = journalSteps(home, 'w', [{ agent: 'main', n: 1 }])
    if (!s) throw new Error('no step')
    const summary = await c.finish(s.finish)
    expect(summary).toMatchObject({
      status: 200,
      outcome: 'ok',
      stop_reason: 'end_turn',
      response_file: 'response.json',
    })
    expect(summary.usage).toMatchObject({ output_tokens: 1 })
    const oid = await c.commit(home, 'w', s.commit)
    expect(git(ws.repo.gitdir, 'rev-parse', 'agents/main').trim()).toBe(oid)
    expect(git(ws.repo.gitdir, 'log', '-1', '--format=%s', oid).trim()).toBe(`step 001: ${MODEL} [main]`)
    const request = git(ws.repo.gitdir, 'cat-file', 'blob', `${oid}:steps/main/001/request.json`)
    expect(Buffer.from(request).equals(s.request)).toBe(true)
    expect(show(`${oid}:steps/main/001/response.json`)).toBe(s.answer)
    const meta = JSON.parse(show(`${oid}:steps/main/001/meta.json`)) as Record<string, unknown>
    expect(meta).toMatchObject({
      workspace: 'w',
      agent: 'main',
      step: '001',
      status: 200,
      usage: { output_tokens: 1 },
    })
    expect(git(ws.repo.gitdir, 'fsck', '--strict', '--no-dangling')).toBe('')
  })

  it('refuses to commit a step whose finish it never kept, naming the step, and moves nothing', async () => {
    const [s] = journalSteps(home, 'w', [{ agent: 'main', n: 1 }])
    await expect(c.commit(home, 'w', s!.commit)).rejects.toThrow(
      'the finish of step 001 of main was lost (the commit worker restarted)',
    )
    expect(() => git(ws.repo.gitdir, 'rev-parse', '--verify', '-q', 'agents/main')).toThrow()
  })

  it('commits a job that carries its finished half without any finish call, once', async () => {
    const [s1, s2] = journalSteps(home, 'w', [
      { agent: 'main', n: 1 },
      { agent: 'main', n: 2 },
    ])
    const o1 = await c.commit(home, 'w', { ...s1!.commit, finished: finishStep(s1!.finish) })
    const o2 = await c.commit(home, 'w', { ...s2!.commit, finished: finishStep(s2!.finish) })
    expect(git(ws.repo.gitdir, 'rev-list', '--parents', '-1', o2).trim()).toBe(`${o2} ${o1}`)
    expect(show(`${o2}:steps/main/002/response.json`)).toBe(s2!.answer)
  })

  // Regression: the inline committer ran an agent's commits side by side, so a later step could
  // land first and an earlier one on top of it (seen on a busy machine in the record stage's test).
  it("commits an agent's steps asked for together in the order asked, each on the one before", async () => {
    const steps = journalSteps(
      home,
      'w',
      [1, 2, 3, 4, 5].map((n) => ({ agent: 'main', n })),
    )
    const oids = await Promise.all(
      steps.map((s) => c.commit(home, 'w', { ...s.commit, finished: finishStep(s.finish) })),
    )
    expect(git(ws.repo.gitdir, 'rev-list', 'agents/main', '-n', '5').trim().split('\n')).toEqual(
      [...oids].reverse(),
    )
    expect(git(ws.repo.gitdir, 'log', '--format=%s', '-1', 'agents/main').trim()).toBe(
      `step 005: ${MODEL} [main]`,
    )
  })
}

describe('InlineCommitter', () => {
  contract(() => new InlineCommitter())

  it('merges the packs of a workspace on maintain, keeping every step readable', async () => {
    const c = new InlineCommitter()
    const steps = journalSteps(
      home,
      'w',
      [1, 2, 3, 4].map((n) => ({ agent: 'main', n })),
    )
    for (const s of steps) await c.commit(home, 'w', { ...s.commit, finished: finishStep(s.finish) })
    const before = packFiles(ws.repo.gitdir).length
    await c.maintain(home, 'w')
    expect(packFiles(ws.repo.gitdir).length).toBeLessThan(before)
    expect(show('agents/main:steps/main/004/response.json')).toBe(steps[3]!.answer)
  })
})

describe('WorkerCommitter', () => {
  contract(() => new WorkerCommitter())

  it('fails the commits pending in a worker that dies, then starts a new worker for the next one', async () => {
    const c = new WorkerCommitter()
    try {
      const [s1, s2] = journalSteps(home, 'w', [
        { agent: 'main', n: 1 },
        { agent: 'main', n: 2 },
      ])
      await c.finish(s1!.finish) // the worker is up
      const worker = (c as unknown as { worker: Worker }).worker
      const pending = c.commit(home, 'w', s1!.commit) // waits in the worker's 20 ms gathering window
      await worker.terminate()
      await expect(pending).rejects.toThrow(/the commit worker exited/)
      expect(() => git(ws.repo.gitdir, 'rev-parse', '--verify', '-q', 'agents/main')).toThrow()
      // A fresh worker kept no finish: a job must carry its own, and then it commits.
      await expect(c.commit(home, 'w', s1!.commit)).rejects.toThrow(/was lost/)
      const oid = await c.commit(home, 'w', { ...s1!.commit, finished: finishStep(s1!.finish) })
      expect(git(ws.repo.gitdir, 'rev-parse', 'agents/main').trim()).toBe(oid)
      expect((c as unknown as { worker: Worker }).worker).not.toBe(worker)
      await c.finish(s2!.finish)
      await c.commit(home, 'w', s2!.commit)
      expect(await ws.committedSteps('main')).toBe(2)
    } finally {
      await c.close()
    }
  })

  it('sends what is asked in one turn of the event loop as one message, and a memory question at once', async () => {
    const c = new WorkerCommitter()
    try {
      const steps = journalSteps(
        home,
        'w',
        [1, 2, 3, 4].map((n) => ({ agent: 'main', n })),
      )
      await c.finish(steps[0]!.finish) // the worker is up
      const worker = (c as unknown as { worker: Worker }).worker
      const sent = jest.spyOn(worker, 'postMessage')
      const summaries = await Promise.all(steps.slice(1).map((s) => c.finish(s.finish)))
      expect(summaries.map((x) => x.status)).toEqual([200, 200, 200])
      expect(sent).toHaveBeenCalledTimes(1)
      expect((sent.mock.calls[0]?.[0] as { kind: string }[]).map((m) => m.kind)).toEqual([
        'finish',
        'finish',
        'finish',
      ])
      const memory = c.memory()
      expect(sent).toHaveBeenCalledTimes(2)
      expect(await memory).toMatchObject({ heapUsed: expect.any(Number) })
      sent.mockRestore()
    } finally {
      await c.close()
    }
  })

  it('passes a failed maintain back as an error, and maintains a real workspace', async () => {
    const c = new WorkerCommitter()
    try {
      // The same error as inline: its name and message cross the thread.
      const inline = (await new InlineCommitter().maintain(home, 'missing').catch((e: unknown) => e)) as Error
      const err = (await c.maintain(home, 'missing').catch((e: unknown) => e)) as Error
      expect(err).toBeInstanceOf(Error)
      expect({ name: err.name, message: err.message }).toEqual({ name: inline.name, message: inline.message })
      expect(err.message).toMatch(/does not exist/)
      const steps = journalSteps(
        home,
        'w',
        [1, 2, 3].map((n) => ({ agent: 'main', n })),
      )
      for (const s of steps) await c.commit(home, 'w', { ...s.commit, finished: finishStep(s.finish) })
      const before = packFiles(ws.repo.gitdir).length
      await c.maintain(home, 'w')
      expect(packFiles(ws.repo.gitdir).length).toBeLessThan(before)
    } finally {
      await c.close()
    }
  })
})
