/**
 * kill -9 against a spawned `holdfast serve`: a step in flight is recovered as interrupted; bursts
 * killed at random moments lose no sent step, leave no gap, no broken ref and a clean fsck, and
 * numbering continues; a stale agent ref lock is cleared at start.
 */
import fs from 'node:fs'
import path from 'node:path'
import { readJournal } from '../../../proxy/record/journal/reader'
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream'
import { configFor, eventually, spawnServe, tempHome, writeConfig, type Spawned } from '../../support/harness'
import {
  branchShape,
  catBlobs,
  catBlobsAsync,
  cliAsync,
  expectedSubjects,
  fsckProblems,
  gitAsync,
} from '../../support/repo-checks'

const MODEL = 'claude-sonnet-4-5'
let fake: FakeUpstream
let home: string
let server: Spawned | undefined

beforeAll(async () => {
  fake = await startFakeUpstream()
  home = tempHome()
  writeConfig(home, configFor(fake))
})
afterEach(async () => {
  await server?.kill('SIGKILL')
  server = undefined
})
afterAll(async () => {
  await fake.close()
  fs.rmSync(home, { recursive: true, force: true })
})

const repo = (): string => path.join(home, 'workspaces', 'default', 'repo.git')
const journal = (agent: string): string => path.join(home, 'workspaces', 'default', 'journal', agent)
const pad = (n: number): string => String(n).padStart(3, '0')
const serve = (): Promise<Spawned> => spawnServe(['--home', home, '--port', '0'])

function body(mark: string): string {
  return JSON.stringify({ model: MODEL, max_tokens: 16, messages: [{ role: 'user', content: mark }] })
}

/** POST a step; resolves with the status, or with 0 when the server died under it. */
async function post(url: string, agent: string, mark: string): Promise<number> {
  try {
    const res = await fetch(`${url}/w/default/a/${agent}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: body(mark),
    })
    await res.arrayBuffer()
    return res.status
  } catch {
    return 0
  }
}

/** The steps committed on an agent's branch, from its tip's tree (none when no branch). */
async function committedSteps(agent: string): Promise<string[]> {
  try {
    const out = await gitAsync(
      repo(),
      'ls-tree',
      '--name-only',
      `refs/heads/agents/${agent}`,
      `steps/${agent}/`,
    )
    return out
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((p) => p.slice(`steps/${agent}/`.length))
  } catch {
    return []
  }
}

/**
 * Every complete record in an agent's journal: step → request bytes, as the product's own reader
 * counts them (a SEND frame torn by the kill is no record: it was never sent).
 */
function journalRequests(agent: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>()
  for (const [n, s] of readJournal(journal(agent)).steps) out.set(pad(n), s.request)
  return out
}

/** Every ref of the repository resolves to a commit, and fsck finds nothing. */
async function refsSound(): Promise<void> {
  const refs = (await gitAsync(repo(), 'for-each-ref', '--format=%(refname)')).trim().split('\n')
  for (const ref of refs) await gitAsync(repo(), 'rev-parse', '--verify', '--quiet', `${ref}^{commit}`)
  expect(await fsckProblems(repo())).toBe('')
}

it('recovers a step killed in flight as interrupted, clearing a stale ref lock at start', async () => {
  const agent = 'inflight'
  server = await serve()
  expect(await post(server.url, agent, 'first')).toBe(200)
  fake.enqueue({ hang: true })
  const pending = post(server.url, agent, 'second, never answered')
  await eventually(() => fake.received.length === 2, 5000, 'the hanging step to reach the provider')
  await server.kill('SIGKILL')
  expect(await pending).toBe(0)
  // The record was written before the send; the meta has no finish half.
  const meta = readJournal(journal(agent)).steps.get(2)?.meta
  expect(meta).toBeDefined()
  expect(meta?.ended_at).toBeUndefined()
  // With no server running, `holdfast steps` shows it pending, cut off.
  const listed = await cliAsync(['steps', 'default', agent, '--json', '--home', home])
  expect(listed.code).toBe(0)
  expect((JSON.parse(listed.stdout) as object[])[1]).toMatchObject({
    step: '002',
    status: null,
    outcome: 'interrupted',
    state: 'pending',
  })
  // A writer killed inside a ref update leaves git's lock file behind; it would refuse every
  // later update of the branch, recovery's own included.
  const lock = path.join(repo(), 'refs', 'heads', 'agents', `${agent}.lock`)
  fs.mkdirSync(path.dirname(lock), { recursive: true })
  fs.writeFileSync(lock, '0000000000000000000000000000000000000000\n')

  server = await serve() // recovery runs before the listening line
  expect(fs.existsSync(lock)).toBe(false)
  const shape = await branchShape(repo(), agent)
  expect(shape.subjects).toEqual(expectedSubjects(agent, 2, MODEL))
  expect(shape.merges).toBe(0)
  const blobs = catBlobs(repo(), [
    `agents/${agent}:steps/${agent}/002/meta.json`,
    `agents/${agent}:steps/${agent}/002/request.json`,
  ])
  const recovered = JSON.parse(blobs.get(`agents/${agent}:steps/${agent}/002/meta.json`)!.toString())
  expect(recovered).toMatchObject({ outcome: 'interrupted', status: null, error: { code: 'INTERRUPTED' } })
  expect(blobs.get(`agents/${agent}:steps/${agent}/002/request.json`)!.equals(fake.received[1]!.body)).toBe(
    true,
  )
  await refsSound()

  expect(await post(server.url, agent, 'third')).toBe(200)
  await eventually(async () => (await committedSteps(agent)).includes('003'), 5000, 'step 003 committed')
  expect(await server.kill('SIGTERM')).toBe(0)
  server = undefined
})

it('loses nothing sent and leaves no gap when bursts are killed at random moments', async () => {
  const agents = ['b1', 'b2', 'b3', 'b4']
  server = await serve()
  for (let round = 1; round <= 3; round++) {
    const url = server.url
    fake.reset() // forgets the scripts a killed burst left unused
    // Numbering continues: each agent's next step takes the number after its branch's last.
    const base = await Promise.all(agents.map(async (a) => (await committedSteps(a)).length))
    for (const [i, agent] of agents.entries()) {
      expect(await post(url, agent, `round ${round} probe`)).toBe(200)
      const probe = readJournal(journal(agent)).steps.get(base[i]! + 1)?.request
      expect(probe?.toString()).toContain(`round ${round} probe`)
    }
    // A staggered burst over varied latencies: at the kill, some steps are being recorded, some
    // are in flight, some finishing and some committing; the last to arrive never gets an answer.
    for (let i = 0; i < 19; i++) fake.enqueue({ delayMs: Math.floor(Math.random() * 150) })
    fake.enqueue({ hang: true })
    const burst = Array.from({ length: 20 }, async (_, i) => {
      await new Promise((r) => setTimeout(r, i * 15))
      return post(url, agents[i % 4]!, `round ${round} request ${i}`)
    })
    const killAt = 50 + Math.floor(Math.random() * 350)
    await new Promise((r) => setTimeout(r, killAt))
    await server.kill('SIGKILL')
    await Promise.all(burst)
    const journals = new Map(agents.map((a) => [a, journalRequests(a)]))

    server = await serve()
    const why = `round ${round}, killed ${killAt} ms in`
    const committed = await Promise.all(
      agents.map(async (agent) => {
        const steps = await committedSteps(agent)
        // Numbered 001..N with no gap, on a linear branch whose subjects say the same.
        expect({ why, steps }).toEqual({ why, steps: steps.map((_, i) => pad(i + 1)) })
        const shape = await branchShape(repo(), agent)
        expect(shape.subjects).toEqual(expectedSubjects(agent, steps.length, MODEL))
        expect(shape.merges).toBe(0)
        const spec = (s: string, file: string) => `agents/${agent}:steps/${agent}/${s}/${file}`
        const recorded = journals.get(agent)!
        const blobs = await catBlobsAsync(repo(), [
          ...steps.map((s) => spec(s, 'request.json')),
          ...[...recorded.keys()].map((s) => spec(s, 'meta.json')),
        ])
        // Every recorded step is committed, with the bytes recorded, and finished (or recovered
        // as interrupted).
        for (const [step, bytes] of recorded) {
          const got = blobs.get(spec(step, 'request.json'))
          expect({ why, step, committed: got?.equals(bytes) ?? false }).toEqual({
            why,
            step,
            committed: true,
          })
          const meta = JSON.parse(blobs.get(spec(step, 'meta.json'))!.toString())
          expect(meta.ended_at).toEqual(expect.any(String))
        }
        return steps.map((s) => blobs.get(spec(s, 'request.json'))!)
      }),
    )
    // Every request the provider received is a committed step with exactly those bytes.
    const bodies = committed.flat()
    for (const r of fake.received) {
      const found = bodies.some((b) => b.equals(r.body))
      expect({ why, sent: r.body.toString(), found }).toEqual({ why, sent: r.body.toString(), found: true })
    }
    await refsSound()
  }
  expect(await server.kill('SIGTERM')).toBe(0)
  server = undefined
}, 120_000) // three kill/restart rounds: about 10 s alone, several times that on two loaded cores
