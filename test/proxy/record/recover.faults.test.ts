/**
 * Records that survive the disk (issue 28), with a real `holdfast serve` whose disk fails on
 * demand (test/support/disk-faults.js: a full or read-only file system under a directory, for the
 * server thread and its commit worker alike). Rules: a full disk refuses steps with
 * RECORD_WRITE_FAILED and sends nothing; steps the journal took but the repository could not are
 * committed, in order and byte-equal to what the provider received, once the disk has room, without
 * a restart; a restart while the repository is read-only deletes nothing and numbers new steps
 * after the ones waiting; `holdfast recover` commits them once the disk allows, with or without a
 * running serve; a flipped byte in a journal loses the damaged frame only, its bytes kept aside and
 * its number never given again.
 */
import fs from 'node:fs'
import path from 'node:path'
import type { StepMeta } from '../../../generated/meta'
import { Journal } from '../../../proxy/record/journal/writer'
import { segmentFiles } from '../../../proxy/record/journal/reader'
import { homeToken } from '../../../proxy/store/token'
import { loadConfig } from '../../../proxy/store/config'
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream'
import {
  cli,
  configFor,
  eventually,
  git,
  gitBytes,
  ROOT,
  spawnServe,
  tempHome,
  writeConfig,
  type Spawned,
} from '../../support/harness'
import { postAnthropic } from '../../support/raw-http'
import { sentMeta } from './commit.support'

const DISK_FAULTS = path.join(ROOT, 'test', 'support', 'disk-faults.js')
const MODEL = 'claude-sonnet-4-5'

let fake: FakeUpstream
let home: string
let control: string
let server: Spawned | undefined

beforeAll(async () => {
  fake = await startFakeUpstream()
})
beforeEach(() => {
  home = tempHome()
  control = path.join(home, 'disk-faults.json')
  writeConfig(home, configFor(fake))
  fake.reset()
})
afterEach(async () => {
  await server?.kill('SIGKILL')
  server = undefined
  fs.rmSync(home, { recursive: true, force: true })
})
afterAll(() => fake.close())

const env = (): NodeJS.ProcessEnv => ({ HOLDFAST_DISK_FAULTS: control, HOLDFAST_LOG_LEVEL: 'info' })
const serve = (): Promise<Spawned> => spawnServe(['--home', home, '--port', '0'], env(), ['-r', DISK_FAULTS])
const wsDir = (): string => path.join(home, 'workspaces', 'default')
const repo = (): string => path.join(wsDir(), 'repo.git')
/** The disk under `dir` fails with `fault` from now on; undefined: the disk is healthy again. */
const disk = (fault?: 'ENOSPC' | 'EROFS', dir = wsDir()): void =>
  fs.writeFileSync(control, fault ? JSON.stringify({ under: dir, fault }) : '')

const body = (text: string, pad = 0): string =>
  JSON.stringify({
    model: MODEL,
    max_tokens: 16,
    messages: [{ role: 'user', content: text + 'x'.repeat(pad) }],
  })
const post = (agent: string, text: string, pad = 0) =>
  postAnthropic((server as Spawned).url, `/w/default/a/${agent}/v1/messages`, body(text, pad))

/** The steps on `agent`'s branch, by number. */
function branch(agent: string): string[] {
  try {
    return git(repo(), 'ls-tree', '--name-only', `agents/${agent}`, `steps/${agent}/`)
      .split('\n')
      .filter(Boolean)
      .map((s) => s.slice(`steps/${agent}/`.length))
  } catch {
    return []
  }
}
const requestAt = (agent: string, n: string): string =>
  git(repo(), 'show', `agents/${agent}:steps/${agent}/${n}/request.json`)
/** What the provider received for `agent`, in order (the fake sees each body once). */
const receivedBy = (marker: string): string[] =>
  fake.received.map((r) => r.body.toString()).filter((b) => b.includes(marker))

async function health(): Promise<{ commit_faults: { error: string; waiting: number }[] }> {
  const token = homeToken(home, loadConfig(home))
  const res = await fetch(`${(server as Spawned).url}/_holdfast/health`, {
    headers: token ? { 'x-holdfast-token': token } : {},
  })
  return (await res.json()) as { commit_faults: { error: string; waiting: number }[] }
}

describe('a full disk', () => {
  it('refuses steps while the journal cannot take them, then commits every answered step in order, byte-equal, once there is room', async () => {
    server = await serve()
    for (const t of ['f1', 'f2', 'f3']) expect((await post('full', t)).status).toBe(200)
    await eventually(() => branch('full').length === 3, 30_000)
    // The whole workspace is full: nothing can be recorded, so nothing is sent.
    disk('ENOSPC')
    for (let i = 0; i < 4; i++) {
      const r = await post('full', `refused ${i}`, 30_000)
      expect([r.status, r.headers['x-holdfast-error']]).toEqual([500, 'RECORD_WRITE_FAILED'])
    }
    expect(receivedBy('refused')).toEqual([])
    // The journal has room again but the repository does not: steps are answered, commits wait.
    disk('ENOSPC', repo())
    for (const t of ['w4', 'w5', 'w6']) expect((await post('full', t, 30_000)).status).toBe(200)
    await eventually(async () => (await health()).commit_faults.some((f) => /ENOSPC/.test(f.error)), 30_000)
    expect(branch('full')).toEqual(['001', '002', '003'])
    disk(undefined)
    await eventually(() => branch('full').length === 6, 60_000)
    expect(branch('full')).toEqual(['001', '002', '003', '004', '005', '006'])
    const sent = receivedBy('"content":"')
    expect(sent).toHaveLength(6)
    sent.forEach((b, i) => expect(requestAt('full', String(i + 1).padStart(3, '0'))).toBe(b))
    expect((await health()).commit_faults).toEqual([])
    expect(git(repo(), 'fsck', '--strict', '--no-dangling')).toBe('')
  })
})

describe('a full disk during an answer, then a stop', () => {
  const streamed = (text: string): string =>
    JSON.stringify({
      model: MODEL,
      max_tokens: 16,
      stream: true,
      messages: [{ role: 'user', content: text }],
    })
  const metaAt = (agent: string, n: string): StepMeta =>
    JSON.parse(git(repo(), 'show', `agents/${agent}:steps/${agent}/${n}/meta.json`)) as StepMeta
  const agents = async () =>
    ((await health()) as unknown as { agents: { agent: string; answers_in_memory: number[] }[] }).agents

  /** Three steps, then the disk fills while step 004's answer is on its way; the client gets it whole. */
  async function answeredWhileFull(agent: string, answer: string, streams: boolean): Promise<Buffer> {
    for (const t of ['k1', 'k2', 'k3']) expect((await post(agent, t)).status).toBe(200)
    await eventually(() => branch(agent).length === 3, 30_000)
    fake.enqueue({ delayMs: 1500, text: answer })
    const url = `/w/default/a/${agent}/v1/messages`
    const answered = postAnthropic(
      (server as Spawned).url,
      url,
      streams ? streamed('while full') : body('while full'),
    )
    await eventually(() => receivedBy('while full').length === 1, 10_000)
    disk('ENOSPC')
    const r = await answered
    expect(r.status).toBe(200)
    expect(r.body.toString()).toContain(answer.slice(0, 200))
    return r.body
  }

  it('keeps the answer in the journal through a stop while the disk is full: the next start commits it answered, byte-equal', async () => {
    writeConfig(home, configFor(fake, { timeouts: { shutdown_ms: 1000 } }))
    server = await serve()
    const got = await answeredWhileFull('keep', 'z'.repeat(30_000), true)
    // The commit cannot land (no room for its pack); the answer is in the journal, not only in memory.
    await eventually(async () => (await health()).commit_faults.some((f) => /ENOSPC/.test(f.error)), 30_000)
    expect((await agents()).find((a) => a.agent === 'keep')?.answers_in_memory).toEqual([])
    expect(await server.kill('SIGTERM')).toBe(0)
    expect(server.stderr()).not.toMatch(/could not keep/)
    expect(branch('keep')).toEqual(['001', '002', '003'])
    server = undefined
    disk(undefined)
    server = await serve()
    expect(branch('keep')).toEqual(['001', '002', '003', '004'])
    expect(metaAt('keep', '004')).toMatchObject({ outcome: 'ok', status: 200, response_file: 'response.sse' })
    expect(gitBytes(repo(), 'show', 'agents/keep:steps/keep/004/response.sse').equals(got)).toBe(true)
  })

  it('keeps a JSON answer through a kill -9 while the disk is full: committed answered at the next start', async () => {
    server = await serve()
    await answeredWhileFull('killed', 'q'.repeat(20_000), false)
    await eventually(async () => (await health()).commit_faults.some((f) => /ENOSPC/.test(f.error)), 30_000)
    await server.kill('SIGKILL')
    server = undefined
    disk(undefined)
    server = await serve()
    expect(branch('killed')).toEqual(['001', '002', '003', '004'])
    expect(metaAt('killed', '004')).toMatchObject({ outcome: 'ok', status: 200 })
    expect(git(repo(), 'show', 'agents/killed:steps/killed/004/response.json')).toContain('q'.repeat(100))
  })

  it('says which answers only memory held when the reserve is smaller than the answer, and that the stop loses them', async () => {
    writeConfig(home, configFor(fake, { timeouts: { shutdown_ms: 1000 }, journal: { reserve_bytes: 4096 } }))
    server = await serve()
    expect((await post('mem', 'first')).status).toBe(200)
    await eventually(() => branch('mem').length === 1, 30_000)
    // The request is journaled and sent; the disk fills before the answer comes back.
    fake.enqueue({ delayMs: 1500, text: 'm'.repeat(30_000) })
    const answered = post('mem', 'while full')
    await eventually(() => receivedBy('while full').length === 1, 10_000)
    disk('ENOSPC')
    expect((await answered).status).toBe(200)
    await eventually(async () => (await agents()).some((a) => a.answers_in_memory.includes(2)), 10_000)
    const code = await server.kill('SIGTERM')
    expect(code).toBe(0)
    const log = server.stderr()
    expect(log).toContain(
      'default/mem: the answers of step 002 reached the client but the journal could not keep them',
    )
    expect(log).not.toContain('some answered steps are not committed yet: they stay in the journal')
    // The lost step is the only one not committed: no sentence about other steps that are not there.
    expect(log).not.toContain('the other answered steps not committed yet')
    expect(log).toContain('with only the part of the answer the journal took')
    server = undefined
  })

  it('refuses a new step while the reserve cannot be made whole again, and records again once there is room', async () => {
    server = await serve()
    await answeredWhileFull('after', 'r'.repeat(30_000), true)
    // The disk is full and the reserve was drawn on: the next step is refused before anything is sent.
    disk(undefined)
    disk('ENOSPC')
    const refused = await post('after', 'refused while drawn')
    expect([refused.status, refused.headers['x-holdfast-error']]).toEqual([500, 'RECORD_WRITE_FAILED'])
    expect(receivedBy('refused while drawn')).toEqual([])
    disk(undefined)
    expect((await post('after', 'k5')).status).toBe(200)
    await eventually(() => branch('after').length === 5, 30_000)
    expect(fs.statSync(path.join(wsDir(), 'journal', '.reserve')).size).toBe(4 * 1024 * 1024)
  })
})

describe('a start on a full disk', () => {
  it('serves: the lock is a link, steps are refused RECORD_WRITE_FAILED while the disk is full, and recorded once it has room', async () => {
    // A first start made the token and the workspace; the second meets a home with no room at all.
    server = await serve()
    expect((await post('start', 's1')).status).toBe(200)
    await eventually(() => branch('start').length === 1, 30_000)
    await server.kill('SIGTERM')
    server = undefined
    disk('ENOSPC', home)
    server = await serve()
    expect(fs.lstatSync(path.join(home, 'serve.lock')).isSymbolicLink()).toBe(true)
    expect(server.stderr()).toMatch(/could not write .*serve\.json \(ENOSPC\)/)
    const refused = await post('start', 'refused', 1000)
    expect([refused.status, refused.headers['x-holdfast-error']]).toEqual([500, 'RECORD_WRITE_FAILED'])
    expect(receivedBy('refused')).toEqual([])
    // A second serve on the same home is still refused: the link is a lock like the file.
    const second = cli(['serve', '--home', home, '--port', '0'], env())
    expect(second.code).not.toBe(0)
    expect(second.stderr).toMatch(/already running .*\(pid \d+\)/)
    disk(undefined)
    expect((await post('start', 's2')).status).toBe(200)
    await eventually(() => branch('start').length === 2, 30_000)
    expect(branch('start')).toEqual(['001', '002'])
  })
})

describe('a restart while the repository is read-only', () => {
  it('deletes nothing, numbers new steps after the waiting ones, and holdfast recover commits them all once writable', async () => {
    server = await serve()
    for (const t of ['r1', 'r2']) expect((await post('ro', t)).status).toBe(200)
    await eventually(() => branch('ro').length === 2, 30_000)
    disk('EROFS', repo())
    for (const t of ['r3', 'r4', 'r5']) expect((await post('ro', t)).status).toBe(200)
    await server.kill('SIGKILL')
    server = await serve() // still read-only: recovery cannot commit, and keeps everything
    expect(server.stderr()).toMatch(/ro: steps 003\.\.005 wait in the journal/)
    expect(segmentFiles(path.join(wsDir(), 'journal', 'ro')).length).toBeGreaterThan(0)
    expect((await post('ro', 'r6')).status).toBe(200)
    // Asked while the disk is still read-only: it says what waits, and fails.
    const early = cli(['recover', 'default', '--home', home, '--wait-ms', '1500'], env())
    expect(early.code).toBe(1)
    expect(early.stdout).toMatch(/still wait for the disk/)
    disk(undefined)
    const r = cli(['recover', 'default', '--home', home], env())
    expect([r.code, r.stderr]).toEqual([0, ''])
    await eventually(() => branch('ro').length === 6, 30_000)
    expect(branch('ro')).toEqual(['001', '002', '003', '004', '005', '006'])
    receivedBy('"content":"r').forEach((b, i) =>
      expect(requestAt('ro', String(i + 1).padStart(3, '0'))).toBe(b),
    )
    expect(fs.existsSync(path.join(home, 'quarantine'))).toBe(false)
  })

  it('without a running serve, holdfast recover takes the home and commits what waits', async () => {
    server = await serve()
    expect((await post('cold', 'c1')).status).toBe(200)
    await eventually(() => branch('cold').length === 1, 30_000)
    disk('EROFS', repo())
    for (const t of ['c2', 'c3']) expect((await post('cold', t)).status).toBe(200)
    await server.kill('SIGKILL')
    server = undefined
    disk(undefined)
    const r = cli(['recover', 'default', '--home', home], env())
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/committed 2 step\(s\) from the journal/)
    expect(branch('cold')).toEqual(['001', '002', '003'])
  })
})

describe('a damaged journal', () => {
  const meta = (n: number): StepMeta => sentMeta('default', 'flip', n)

  it('loses only the frame a flipped byte is in: the other steps are committed, the bytes kept aside, the number never given again', async () => {
    const dir = path.join(wsDir(), 'journal', 'flip')
    const journal = new Journal(false)
    const sends: number[] = []
    for (let n = 1; n <= 5; n++) {
      const e = journal.agent(dir).send(n, meta(n), Buffer.from(body(`flip ${n}`)))
      sends.push(e.place.request.offset)
    }
    journal.close()
    const file = segmentFiles(dir)[0]!.file
    const data = fs.readFileSync(file)
    const at = (sends[1] as number) + 10 // inside step 2's request
    data.writeUInt8(data.readUInt8(at) ^ 0x04, at)
    fs.writeFileSync(file, data)
    server = await serve()
    expect(branch('flip')).toEqual(['001', '003', '004', '005'])
    expect(server.stderr()).toMatch(/flip: step 002 was recorded but its journal frame is damaged/)
    const kept = fs.readdirSync(path.join(home, 'quarantine', 'default', 'flip', 'damaged'))
    expect(kept.filter((f) => f.endsWith('.bin'))).toEqual([expect.stringMatching(/-002\.bin$/)])
    expect((await post('flip', 'after')).status).toBe(200)
    await eventually(() => branch('flip').includes('006'), 30_000)
    expect(JSON.parse(git(repo(), 'show', 'agents/flip:steps/flip/003/meta.json')).outcome).toBe('not_sent')
    // holdfast steps shows the gap, and where the bytes went.
    const listed = cli(['steps', 'default', 'flip', '--home', home], env())
    expect(listed.stdout).toMatch(/^002 .* missing\s*$/m)
    expect(listed.stdout).toMatch(
      /step 002 is missing: its journal frame was damaged; the bytes are kept in .*-002\.bin/,
    )
  })
})

describe('a damaged journal costs at most its damaged bytes', () => {
  const meta = (agent: string, n: number): StepMeta => sentMeta('default', agent, n)
  const answerOf = (n: number): string =>
    JSON.stringify({
      id: `msg_${n}`,
      type: 'message',
      role: 'assistant',
      content: [{ type: 'text', text: `answer ${n}` }],
    })
  const head = {
    status: 200,
    headers: { 'content-type': 'application/json' },
    ttfb_ms: 1,
    total_ms: 2,
    ended_at: '2026-12-06T00:00:01.000Z',
  }

  /** Five answered steps of `agent` in its journal, as a serve killed before their commits leaves them; each SEND's offset. */
  function journaled(agent: string): { file: string; sends: number[] } {
    const dir = path.join(wsDir(), 'journal', agent)
    const journal = new Journal(false)
    const sends: number[] = []
    for (let n = 1; n <= 5; n++) {
      const e = journal.agent(dir).send(n, meta(agent, n), Buffer.from(body(`${agent} ${n}`)))
      sends.push(e.place.meta.offset - 4 - 16)
      e.sent()
      e.chunk(Buffer.from(answerOf(n)))
      e.head(head)
    }
    journal.close()
    return { file: segmentFiles(dir)[0]!.file, sends }
  }
  const metaAt = (agent: string, n: string): StepMeta =>
    JSON.parse(git(repo(), 'show', `agents/${agent}:steps/${agent}/${n}/meta.json`)) as StepMeta

  it("keeps a step's whole answer frames aside when a flipped byte damaged its send half, and says where", async () => {
    const { file, sends } = journaled('send')
    const data = fs.readFileSync(file)
    const at = (sends[1] as number) + 60 // inside step 2's SEND
    data.writeUInt8(data.readUInt8(at) ^ 0x10, at)
    fs.writeFileSync(file, data)
    server = await serve()
    expect(branch('send')).toEqual(['001', '003', '004', '005'])
    expect(server.stderr()).toMatch(
      /send: step 002's answer frames are whole but its send half is damaged: they are kept at/,
    )
    const damaged = path.join(home, 'quarantine', 'default', 'send', 'damaged')
    const answer = fs.readdirSync(damaged).find((f) => f.endsWith('-002.answer')) as string
    expect(fs.readFileSync(path.join(damaged, answer), 'utf8')).toBe(answerOf(2))
    // The journal file is gone (its other steps are committed); the damaged bytes and the answer's frames are not.
    expect(fs.existsSync(file)).toBe(false)
    const frames = fs.readdirSync(damaged).filter((f) => f.endsWith('.bin'))
    expect(frames).toHaveLength(2)
    const listed = cli(['steps', 'default', 'send', '--home', home], env())
    expect(listed.stdout).toMatch(
      /step 002 is missing: its journal frame was damaged; .*the answer is kept in .*-002\.answer/,
    )
    expect((await post('send', 'after')).status).toBe(200)
    await eventually(() => branch('send').includes('006'), 30_000)
  })

  it('commits as answered a step whose HEAD a torn last write cut 7 bytes short: its chunks hold the whole answer', async () => {
    const { file } = journaled('torn')
    fs.truncateSync(file, fs.statSync(file).size - 7)
    server = await serve()
    expect(branch('torn')).toEqual(['001', '002', '003', '004', '005'])
    expect(metaAt('torn', '005')).toMatchObject({
      outcome: 'ok',
      status: 200,
      response_file: 'response.json',
    })
    expect(git(repo(), 'show', 'agents/torn:steps/torn/005/response.json')).toBe(answerOf(5))
    expect(server.stderr()).toMatch(/torn: \d+ torn journal bytes kept at .*-005\.bin/)
  })

  it("keeps a zeroed tail's numbers reserved: the next step is numbered after every step it could have held", async () => {
    const { file, sends } = journaled('zero')
    const data = fs.readFileSync(file)
    data.fill(0, sends[3] as number) // steps 4 and 5: written, then zeroed by a power cut
    fs.writeFileSync(file, data)
    server = await serve()
    expect(branch('zero')).toEqual(['001', '002', '003'])
    expect(server.stderr()).toMatch(
      /zero: steps 004\.\.\d{3} may have been recorded in journal bytes .* their numbers are not given again/,
    )
    expect((await post('zero', 'after the cut')).status).toBe(200)
    await eventually(() => branch('zero').length === 4, 30_000)
    const next = Number(branch('zero')[3])
    expect(next).toBeGreaterThan(5)
    // Restarted, the reservation holds (the journal file that named those numbers is gone).
    await server.kill('SIGTERM')
    server = await serve()
    expect((await post('zero', 'later')).status).toBe(200)
    await eventually(() => branch('zero').length === 5, 30_000)
    expect(Number(branch('zero')[4])).toBe(next + 1)
    const listed = cli(['steps', 'default', 'zero', '--home', home], env())
    expect(listed.stdout).toMatch(
      /step 004 is missing: the journal file 001\.log lost the bytes that may have held steps 004\.\./,
    )
  })
})

describe('a power cut that took the newest pack', () => {
  it('leaves the workspace serving: the pack set aside, the branch moved back, the steps the journal holds committed again', async () => {
    writeConfig(home, configFor(fake, { journal: { fsync: true } }))
    server = await serve()
    const packDir = path.join(repo(), 'objects', 'pack')
    const kept = path.join(home, 'kept-packs')
    for (const [i, t] of ['p1', 'p2', 'p3'].entries()) {
      expect((await post('cut', t)).status).toBe(200)
      await eventually(() => branch('cut').length === i + 1, 30_000)
      // The packs after step 2: the agent's chain pack holding steps 1-2 is replaced by one
      // holding 1-3, and removed only once that one is on the disk.
      if (i === 1) fs.cpSync(packDir, kept, { recursive: true })
    }
    await server.kill('SIGKILL')
    // What ext4 shows after a cut that came before the newest pack reached the disk: empty files,
    // and the pack it replaced still there (its removal waited for the flush that never came).
    const newest = fs
      .readdirSync(packDir)
      .filter((f) => f.endsWith('.pack'))
      .map((f) => ({ f, t: fs.statSync(path.join(packDir, f)).mtimeMs }))
      .sort((a, b) => b.t - a.t)[0]!.f
    for (const ext of ['.pack', '.idx']) {
      const file = path.join(packDir, newest.replace(/\.pack$/, ext))
      fs.chmodSync(file, 0o644)
      fs.truncateSync(file, 0)
    }
    for (const f of fs.readdirSync(kept))
      if (!fs.existsSync(path.join(packDir, f))) fs.copyFileSync(path.join(kept, f), path.join(packDir, f))
    server = await serve()
    expect(server.stderr()).toMatch(/moved aside to .*damaged\/packs/)
    expect(server.stderr()).toMatch(/moved back to [0-9a-f]{12}/)
    expect(branch('cut')).toEqual(['001', '002', '003'])
    expect(requestAt('cut', '003')).toBe(receivedBy('"content":"p3')[0])
    expect((await post('cut', 'p4')).status).toBe(200)
    await eventually(() => branch('cut').length === 4, 30_000)
    expect(git(repo(), 'fsck', '--strict', '--no-dangling')).toBe('')
  })
})
