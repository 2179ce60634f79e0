/**
 * Concurrent agents and concurrent requests of one agent through the in-process proxy: every
 * branch is linear and numbered 001.. in step order, every committed request.json is the exact
 * bytes the provider received, and each step's hold verdict is the one its real predecessor gives.
 */
import { startProxy, type Proxy } from '../../support/harness'
import { branchShape, catBlobs, expectedSubjects, fsckProblems } from '../../support/repo-checks'

const MODEL = 'claude-sonnet-4-5'
let p: Proxy

beforeAll(async () => {
  p = await startProxy()
})
afterAll(async () => {
  await p.close()
})

const pad = (n: number): string => String(n).padStart(3, '0')
const marker = (agent: string, k: number): string => `<<${agent}#${pad(k)}>>`

async function post(agent: string, body: object): Promise<void> {
  const res = await fetch(`${p.url}/w/default/a/${agent}/v1/messages`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'anthropic-version': '2023-06-01',
      'x-api-key': 'sk-test',
    },
    body: JSON.stringify(body),
  })
  const text = await res.text()
  if (res.status !== 200) throw new Error(`${agent}: status ${res.status}: ${text}`)
}

/** The fake's copy of the request carrying `mark`; exactly one must exist. */
function receivedWith(mark: string): Buffer {
  const hits = p.fake.received.filter((r) => r.body.includes(mark))
  expect(hits).toHaveLength(1)
  return hits[0]!.body
}

const tool = (name: string) => ({
  name,
  description: `the ${name} tool`,
  input_schema: { type: 'object', properties: { x: { type: 'string' } } },
})
const namesOf = (body: Buffer): string[] =>
  ((JSON.parse(body.toString('utf8')) as { tools?: { name: string }[] }).tools ?? []).map((t) => t.name)

/** `sub` is `of` with entries removed, order kept. */
function isSubsequence(sub: string[], of: string[]): boolean {
  let j = 0
  for (const name of of) if (j < sub.length && sub[j] === name) j++
  return j === sub.length
}

describe('8 agents × 10 steps at once', () => {
  it('gives each agent a linear branch of 10 steps in order, each holding the exact bytes received', async () => {
    p.fake.reset()
    const agents = Array.from({ length: 8 }, (_, i) => `agent-${i + 1}`)
    await Promise.all(
      agents.map(async (agent) => {
        const messages: object[] = []
        for (let k = 1; k <= 10; k++) {
          messages.push({ role: 'user', content: `turn ${k} ${marker(agent, k)}` })
          await post(agent, { model: MODEL, max_tokens: 16, tools: [tool('read')], messages })
          messages.push({ role: 'assistant', content: 'ok' })
        }
      }),
    )
    await p.settled()
    expect(p.fake.received).toHaveLength(80)

    for (const agent of agents) {
      const shape = await branchShape(p.repo(), agent)
      expect(shape.subjects).toEqual(expectedSubjects(agent, 10, MODEL))
      expect(shape.merges).toBe(0)
      expect(shape.count).toBe(11)
    }
    const specs = agents.flatMap((a) =>
      Array.from({ length: 10 }, (_, i) => `agents/${a}:steps/${a}/${pad(i + 1)}/request.json`),
    )
    const blobs = catBlobs(p.repo(), specs)
    for (const agent of agents) {
      for (let k = 1; k <= 10; k++) {
        const recorded = blobs.get(`agents/${agent}:steps/${agent}/${pad(k)}/request.json`)
        expect(recorded).toBeDefined()
        // Step k of an agent whose requests were sequential is its k-th request, and the last
        // turn of that request names k.
        expect(recorded!.toString()).toContain(`turn ${k} ${marker(agent, k)}"}]`)
        expect(recorded!.equals(receivedWith(`${marker(agent, k)}"}]`))).toBe(true)
      }
    }
    expect(await fsckProblems(p.repo())).toBe('')
  })
})

describe('10 requests of one agent at once', () => {
  // Tool subsets of t0..t5 (bit i = ti): shrinks, grows and equal sets, so that each verdict
  // depends on which request became the step before it.
  const MASKS = [
    0b111111, 0b101111, 0b001111, 0b111110, 0b000111, 0b110011, 0b000011, 0b111111, 0b000001, 0b010101,
  ]
  const subset = (mask: number): string[] =>
    [0, 1, 2, 3, 4, 5].filter((i) => mask & (1 << i)).map((i) => `t${i}`)

  it('numbers them 001..010 without gaps or duplicates, linearly, each held against its real predecessor', async () => {
    p.fake.reset()
    const agent = 'solo'
    const fired = MASKS.map((mask, i) =>
      post(agent, {
        model: MODEL,
        max_tokens: 16,
        tools: subset(mask).map(tool),
        messages: [
          { role: 'user', content: 'a shared head' },
          { role: 'assistant', content: 'ok' },
          { role: 'user', content: `request ${marker(agent, i)}` },
        ],
      }),
    )
    await Promise.all(fired)
    await p.settled()

    const shape = await branchShape(p.repo(), agent)
    expect(shape.subjects).toEqual(expectedSubjects(agent, 10, MODEL))
    expect(shape.merges).toBe(0)
    const specs = Array.from({ length: 10 }, (_, n) => [
      `agents/${agent}:steps/${agent}/${pad(n + 1)}/request.json`,
      `agents/${agent}:steps/${agent}/${pad(n + 1)}/meta.json`,
    ]).flat()
    const blobs = catBlobs(p.repo(), specs)
    const requestOf = (n: number): Buffer => blobs.get(specs[(n - 1) * 2]!)!
    const metaOf = (n: number) =>
      JSON.parse(blobs.get(specs[(n - 1) * 2 + 1]!)!.toString()) as {
        step: string
        hold: { applied: boolean; reason: string; held: string[] }
      }

    const order: number[] = [] // order[n-1] = the index of the request that became step n
    for (let n = 1; n <= 10; n++) {
      const bytes = requestOf(n)
      const i = MASKS.findIndex((_, j) => bytes.includes(marker(agent, j)))
      expect(i).toBeGreaterThanOrEqual(0)
      order.push(i)
      expect(bytes.equals(receivedWith(marker(agent, i)))).toBe(true)
      const meta = metaOf(n)
      expect(meta.step).toBe(pad(n))
      const asked = subset(MASKS[i]!)
      const sent = namesOf(bytes)
      if (n === 1) {
        expect(meta.hold).toEqual({ applied: false, reason: 'first-step', held: [] })
        expect(sent).toEqual(asked)
        continue
      }
      const before = namesOf(requestOf(n - 1))
      if (asked.length < before.length && isSubsequence(asked, before)) {
        expect(meta.hold).toEqual({
          applied: true,
          reason: 'applied',
          held: before.filter((t) => !asked.includes(t)),
        })
        expect(sent).toEqual(before)
      } else {
        const reason = asked.join() === before.join() ? 'no-subtraction' : 'not-a-sub-multiset'
        expect(meta.hold).toEqual({ applied: false, reason, held: [] })
        expect(sent).toEqual(asked)
      }
    }
    expect([...order].sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    expect(await fsckProblems(p.repo())).toBe('')
  })
})
