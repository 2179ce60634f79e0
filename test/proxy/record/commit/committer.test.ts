/**
 * record/commit/committer: where step commits run. Covers, for the inline committer and the worker one
 * alike: a step is finished and committed from one job (its summary heard first), its request,
 * meta and answer as one commit git reads; a job carrying its finished half is committed as it
 * is; an agent's steps land in the order asked. For the worker: errors cross the thread with their
 * name and message, a worker that dies is started again and sent again what it had not answered
 * (committed once), what is asked in one turn goes as one message, maintain merges packs, and a
 * merge the worker scheduled itself that fails is said in the log with its reason.
 */
import fs from 'node:fs'
import type { Worker } from 'node:worker_threads'
import { finishStep, type FinishSummary } from '../../../../proxy/record/finish'
import { type Committer, InlineCommitter, WorkerCommitter } from '../../../../proxy/record/commit/committer'
import { CHAIN_FROM } from '../../../../proxy/record/commit/step-commits'
import { Workspace } from '../../../../proxy/store/workspace'
import { journalSteps, MODEL } from '../commit.support'
import { git, packFiles, tempDir } from '../../store/git.support'

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

  it('finishes and commits a step from one job: its summary first, then its exact request, the finished meta and the answer on the agent branch', async () => {
    const [s] = journalSteps(home, 'w', [{ agent: 'main', n: 1 }])
    if (!s) throw new Error('no step')
    const heard: string[] = []
    let summary: FinishSummary | undefined
    const oid = await c.commit(home, 'w', s.commit, {
      onFinished: (x) => {
        summary = x
        heard.push('summary')
      },
    })
    heard.push('committed')
    expect(heard).toEqual(['summary', 'committed'])
    expect(summary).toMatchObject({
      status: 200,
      outcome: 'ok',
      stop_reason: 'end_turn',
      response_file: 'response.json',
    })
    expect(summary?.usage).toMatchObject({ output_tokens: 1 })
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

  it('commits a job that carries its finished half as it is', async () => {
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
    const oids = await Promise.all(steps.map((s) => c.commit(home, 'w', s.commit)))
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
    for (const s of steps) await c.commit(home, 'w', s.commit)
    const before = packFiles(ws.repo.gitdir).length
    await c.maintain(home, 'w')
    expect(packFiles(ws.repo.gitdir).length).toBeLessThan(before)
    expect(show('agents/main:steps/main/004/response.json')).toBe(steps[3]!.answer)
    expect(git(ws.repo.gitdir, 'fsck', '--strict', '--no-dangling')).toBe('')
  })
})

describe('WorkerCommitter', () => {
  contract(() => new WorkerCommitter())

  it('sends the commits a dying worker had not answered to a new one, which commits each once, in order', async () => {
    const c = new WorkerCommitter()
    try {
      const [s1, s2, s3] = journalSteps(
        home,
        'w',
        [1, 2, 3].map((n) => ({ agent: 'main', n })),
      )
      const first = await c.commit(home, 'w', s1!.commit) // the worker is up
      const worker = (c as unknown as { worker: Worker }).worker
      // s1 again (as if its answer had been lost with the worker) and s2, waiting in the gathering window.
      const pending = [c.commit(home, 'w', s1!.commit), c.commit(home, 'w', s2!.commit)]
      await new Promise((r) => setImmediate(r)) // sent
      await worker.terminate()
      const [again, second] = await Promise.all(pending)
      expect(again).toBe(first)
      expect((c as unknown as { worker: Worker }).worker).not.toBe(worker)
      const third = await c.commit(home, 'w', s3!.commit)
      expect(git(ws.repo.gitdir, 'rev-list', 'agents/main', '^config/default').trim().split('\n')).toEqual([
        third,
        second,
        first,
      ])
    } finally {
      await c.close()
    }
  })

  it('says in the log why a merge it scheduled itself failed', async () => {
    const warned: { fields: Record<string, unknown>; line: string }[] = []
    let heard!: () => void
    const said = new Promise<void>((r) => (heard = r))
    const log = {
      warn: (fields: Record<string, unknown>, line: string) => {
        warned.push({ fields, line })
        heard()
      },
    }
    const c = new WorkerCommitter(0, false, log)
    try {
      const [s1] = journalSteps(home, 'w', [{ agent: 'main', n: 1 }])
      await c.commit(home, 'w', s1!.commit, { maintainAfter: 1 })
      // The merge comes once the workspace is quiet; by then its repository is gone.
      fs.rmSync(ws.repo.gitdir, { recursive: true, force: true })
      await said
      expect(warned).toHaveLength(1)
      expect(warned[0]!.fields).toMatchObject({ ws: 'w', err: expect.stringContaining('does not exist') })
      expect(warned[0]!.line).toMatch(/^merging the packs of w failed \(the repository .* does not exist\)/)
    } finally {
      await c.close()
    }
  }, 15_000)

  it('fails a commit whose worker died three times before answering it', async () => {
    const c = new WorkerCommitter()
    try {
      const [s1] = journalSteps(home, 'w', [{ agent: 'main', n: 1 }])
      await c.memory() // nothing started yet: no worker is asked
      const pending = c.commit(home, 'w', s1!.commit)
      const failed = pending.catch((e: unknown) => e)
      for (let i = 0; i < 3; i++) {
        await new Promise((r) => setImmediate(r))
        await (c as unknown as { worker: Worker }).worker.terminate()
      }
      expect(String(await failed)).toMatch(/the commit worker exited/)
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
      await c.commit(home, 'w', steps[0]!.commit) // the worker is up
      const worker = (c as unknown as { worker: Worker }).worker
      const sent = jest.spyOn(worker, 'postMessage')
      const summaries: number[] = []
      await Promise.all(
        steps
          .slice(1)
          .map((s) => c.commit(home, 'w', s.commit, { onFinished: (x) => summaries.push(x.status ?? 0) })),
      )
      expect(summaries).toEqual([200, 200, 200])
      expect(sent).toHaveBeenCalledTimes(1)
      expect((sent.mock.calls[0]?.[0] as { kind: string }[]).map((m) => m.kind)).toEqual([
        'commit',
        'commit',
        'commit',
      ])
      const memory = c.memory()
      expect(sent).toHaveBeenCalledTimes(2)
      expect(await memory).toMatchObject({ heapUsed: expect.any(Number) })
      sent.mockRestore()
    } finally {
      await c.close()
    }
  })

  it('removes the packs its chains replaced before it stops', async () => {
    const c = new WorkerCommitter()
    const before = packFiles(ws.repo.gitdir).length
    const steps = journalSteps(
      home,
      'w',
      [1, 2, 3].map((n) => ({ agent: 'big', n, pad: CHAIN_FROM })),
    )
    for (const s of steps) await c.commit(home, 'w', s.commit) // one batch each: the chain replaced twice
    await c.close()
    expect(packFiles(ws.repo.gitdir)).toHaveLength(before + 1)
    expect(show('agents/big:steps/big/003/request.json')).toBe(steps[2]!.request.toString())
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
      for (const s of steps) await c.commit(home, 'w', s.commit)
      const before = packFiles(ws.repo.gitdir).length
      await c.maintain(home, 'w')
      expect(packFiles(ws.repo.gitdir).length).toBeLessThan(before)
      expect(git(ws.repo.gitdir, 'fsck', '--strict', '--no-dangling')).toBe('')
    } finally {
      await c.close()
    }
  })
})
