/**
 * record/commit/worker: the worker thread itself, spoken to with its own messages. Covers: steps
 * that arrive together are committed as one pack, each its own commit in order, every message
 * answered by its id; a step's summary is answered before its commit, when asked; a finish that
 * throws still commits the step; a step sent again is committed once; a branch locked for a while
 * and a full disk are waited out (reported meanwhile), never a step dropped; a maintain runs between
 * a workspace's commits in the order asked and merges its packs; a failure is answered with the
 * error's name and message.
 */
import fs from 'node:fs'
import path from 'node:path'
import { Worker } from 'node:worker_threads'
import { PACKAGE_ROOT, SOURCE_REGISTER } from '../../../../proxy/process/package-root'
import type { CommitFault, CommitReply, CommitRequest } from '../../../../proxy/record/commit/worker'
import type { FinishSummary } from '../../../../proxy/record/finish'
import type { CommitJob } from '../../../../proxy/record'
import { Workspace } from '../../../../proxy/store/workspace'
import { journalSteps, MODEL } from '../commit.support'
import { git, packFiles, tempDir } from '../../store/git.support'
import { eventually } from '../../../support/harness'

/** The worker, and the replies by id in the order they came. */
class Port {
  readonly worker = new Worker(path.join(PACKAGE_ROOT, 'proxy', 'record', 'commit', 'worker.ts'), {
    execArgv: ['-r', SOURCE_REGISTER, '-r', DISK_FAULTS],
    env: { ...process.env, HOLDFAST_DISK_FAULTS: FAULTS },
  })
  readonly order: number[] = []
  /** The summaries answered, by id. */
  readonly summaries = new Map<number, FinishSummary>()
  /** How many replies each message from the worker carried. */
  readonly messages: number[] = []
  private readonly waiting = new Map<number, (r: CommitReply) => void>()
  private nextId = 1
  constructor() {
    this.worker.on('message', (rs: CommitReply[]) => {
      this.messages.push(rs.length)
      for (const r of rs) {
        this.order.push(r.id)
        if ('summary' in r) {
          this.summaries.set(r.id, r.summary)
          continue
        }
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
const commit = (job: CommitJob, id = port.id(), summary = false): Promise<CommitReply> =>
  port.post(commitMessage(job, id, summary))
const commitMessage = (job: CommitJob, id = port.id(), summary = false): CommitRequest => ({
  kind: 'commit',
  id,
  home,
  ws: 'w',
  job,
  maintainAfter: 0,
  summary,
})

/** The simulated disk of the worker (test/support/disk-faults.js): a fault under the repository, or none. */
const FAULTS = path.join(tempDir('holdfast-faults-'), 'control.json')
const DISK_FAULTS = path.join(PACKAGE_ROOT, 'test', 'support', 'disk-faults.js')
const diskFault = (fault: 'ENOSPC' | 'EROFS' | undefined): void =>
  fs.writeFileSync(FAULTS, fault ? JSON.stringify({ under: ws.repo.gitdir, fault }) : '')
const faults = async (): Promise<CommitFault[]> =>
  valueOf(await port.post({ kind: 'faults', id: port.id() })) as CommitFault[]

const valueOf = (r: CommitReply): unknown => {
  if ('summary' in r) throw new Error('a summary is no answer')
  if ('notice' in r) throw new Error(`a notice is no answer: ${r.notice.error}`)
  if ('error' in r) throw new Error(`the worker answered ${r.error.name}: ${r.error.message}`)
  return r.value
}

describe('the commit worker', () => {
  afterEach(() => diskFault(undefined))

  it('commits steps that arrive together as one pack, each its own commit in order, answering each by id', async () => {
    const steps = journalSteps(home, 'w', [
      { agent: 'a', n: 1 },
      { agent: 'a', n: 2 },
      { agent: 'b', n: 1 },
    ])
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
    const meta = JSON.parse(git(ws.repo.gitdir, 'show', `${oids[1]}:steps/a/002/meta.json`))
    expect(meta.usage).toMatchObject({ output_tokens: 2 })
    expect(git(ws.repo.gitdir, 'fsck', '--strict', '--no-dangling')).toBe('')
  })

  it("answers each step's summary (usage, cost) before its commit when asked, in the same message as the others'", async () => {
    const steps = journalSteps(home, 'w', [
      { agent: 'a', n: 1 },
      { agent: 'a', n: 2 },
      { agent: 'b', n: 1 },
    ])
    const seen = port.messages.length
    const ms = steps.map((s) => commitMessage(s.commit, port.id(), true))
    const commits = await Promise.all(port.postAll(ms))
    commits.forEach(valueOf)
    // The three summaries in one message, then the batch's three commits in one.
    expect(port.messages.slice(seen)).toEqual([3, 3])
    expect(ms.map((m) => port.summaries.get(m.id)?.usage?.output_tokens)).toEqual([1, 2, 1])
    expect(await Promise.all(['a', 'b'].map((a) => ws.committedSteps(a)))).toEqual([2, 1])
    const quiet = commitMessage(journalSteps(home, 'w', [{ agent: 'a', n: 3 }])[0]!.commit)
    valueOf(await port.post(quiet))
    expect(port.summaries.has(quiet.id)).toBe(false)
  })

  it('commits a backlog in bounded packs (at most 512 steps each), every step its own commit in order', async () => {
    const steps = journalSteps(
      home,
      'w',
      Array.from({ length: 600 }, (_, i) => ({ agent: `a${i % 3}`, n: Math.floor(i / 3) + 1 })),
    )
    const before = packFiles(ws.repo.gitdir).length
    const replies = await Promise.all(steps.map((s) => commit(s.commit)))
    replies.forEach(valueOf)
    expect(packFiles(ws.repo.gitdir)).toHaveLength(before + 2)
    expect(await Promise.all(['a0', 'a1', 'a2'].map((a) => ws.committedSteps(a)))).toEqual([200, 200, 200])
  })

  it('commits a step whose finish throws with the meta as sent, the error named and the answer kept raw', async () => {
    const [s] = journalSteps(home, 'w', [{ agent: 'a', n: 1 }])
    // A dialect no finish knows: finishing throws.
    const job = { ...s!.commit, finish: { ...s!.finish, dialect: 'nope' as 'anthropic' } }
    const oid = valueOf(await commit(job)) as string
    const meta = JSON.parse(git(ws.repo.gitdir, 'show', `${oid}:steps/a/001/meta.json`))
    expect(meta).toMatchObject({ status: 200, outcome: 'ok', response_file: 'response.txt' })
    expect(meta.error.code).toBe('INTERNAL')
    expect(git(ws.repo.gitdir, 'show', `${oid}:steps/a/001/response.txt`)).toBe(s!.answer)
  })

  it('commits a step sent twice (again after a worker restart) once, answering both with its commit', async () => {
    const [s1, s2] = journalSteps(home, 'w', [
      { agent: 'a', n: 1 },
      { agent: 'a', n: 2 },
    ])
    const first = valueOf(await commit(s1!.commit)) as string
    const [again, next] = (await Promise.all([commit(s1!.commit), commit(s2!.commit)])).map(valueOf)
    expect(again).toBe(first)
    expect(git(ws.repo.gitdir, 'rev-list', 'agents/a', '^config/default').trim().split('\n')).toEqual([
      next,
      first,
    ])
  })

  it('waits out a branch locked for longer than its old give-up (40 s is shortened here by retry), committing it once the lock goes', async () => {
    const [s] = journalSteps(home, 'w', [{ agent: 'a', n: 1 }])
    const lock = path.join(ws.repo.gitdir, 'refs', 'heads', 'agents', 'a.lock')
    fs.mkdirSync(path.dirname(lock), { recursive: true })
    fs.writeFileSync(lock, '')
    const committed = commit(s!.commit)
    // Seven retries meet the lock: past the six the worker once gave up after.
    for (let i = 0; i < 7; i++) {
      await eventually(async () => ((await faults())[0]?.attempts ?? 0) > i, 30_000)
      valueOf(await port.post({ kind: 'retry', id: port.id() }))
    }
    expect(await faults()).toEqual([
      expect.objectContaining({ ws: 'w', error: expect.stringMatching(/locked/), waiting: 1 }),
    ])
    fs.rmSync(lock)
    valueOf(await port.post({ kind: 'retry', id: port.id() }))
    const oid = valueOf(await committed) as string
    expect(git(ws.repo.gitdir, 'rev-parse', 'agents/a').trim()).toBe(oid)
    expect(git(ws.repo.gitdir, 'show', `${oid}:steps/a/001/response.json`)).toBe(s!.answer)
    expect(await faults()).toEqual([])
  })

  it('waits out a full disk: the pack write fails, nothing moves, and every step lands in order once there is room', async () => {
    const steps = journalSteps(
      home,
      'w',
      [1, 2, 3].map((n) => ({ agent: 'a', n })),
    )
    const packs = packFiles(ws.repo.gitdir)
    diskFault('ENOSPC')
    const committed = Promise.all(steps.map((s) => commit(s.commit)))
    await eventually(async () => /ENOSPC/.test((await faults())[0]?.error ?? ''), 30_000)
    expect((await faults())[0]).toMatchObject({ waiting: 3 })
    expect(await ws.committedSteps('a')).toBe(0)
    // A failed pack write leaves no pack behind, nor a temp file of one.
    expect(packFiles(ws.repo.gitdir)).toEqual(packs)
    expect(
      fs.readdirSync(path.join(ws.repo.gitdir, 'objects', 'pack')).filter((f) => f.startsWith('tmp_')),
    ).toEqual([])
    diskFault(undefined)
    valueOf(await port.post({ kind: 'retry', id: port.id() }))
    const oids = (await committed).map(valueOf)
    expect(git(ws.repo.gitdir, 'rev-list', 'agents/a', '^config/default').trim().split('\n')).toEqual(
      [...oids].reverse(),
    )
    expect(git(ws.repo.gitdir, 'show', 'agents/a:steps/a/002/request.json')).toBe(
      steps[1]!.request.toString(),
    )
    expect(git(ws.repo.gitdir, 'fsck', '--strict', '--no-dangling')).toBe('')
  })

  it('runs a maintain between commits in the order asked, merging the packs, and answers every message', async () => {
    const steps = journalSteps(
      home,
      'w',
      [1, 2, 3, 4].map((n) => ({ agent: 'a', n })),
    )
    for (const s of steps.slice(0, 3)) {
      // One batch each: three packs to merge.
      valueOf(await commit(s.commit))
    }
    const before = packFiles(ws.repo.gitdir).length
    const maintainId = port.id()
    const lastId = port.id()
    const [maintained, last] = await Promise.all([
      port.post({ kind: 'maintain', id: maintainId, home, ws: 'w' }),
      commit(steps[3]!.commit, lastId),
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
