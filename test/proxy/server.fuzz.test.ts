/**
 * A seeded fuzz over both dialects (HOLDFAST_FUZZ_SEED, HOLDFAST_FUZZ_COUNT; the seed is printed
 * on failure): 0 crashes, 0 answers of 500 or more, every refusal in an envelope, nothing on disk
 * for a refused request, no credential from a query string in any record, every agent that took
 * a hostile request still answering a well-formed one, and the process's memory bounded.
 */
import fs from 'node:fs'
import path from 'node:path'
import { generate, inEnvelope, send, type FuzzCase } from '../support/fuzz'
import { startProxy, type Proxy } from '../support/harness'

const SEED = Number(process.env.HOLDFAST_FUZZ_SEED ?? 20261202)
const COUNT = Number(process.env.HOLDFAST_FUZZ_COUNT ?? 2000)

let p: Proxy
beforeAll(async () => {
  p = await startProxy({ config: { limits: { body_bytes: 4 * 1024 * 1024 } } })
})
afterAll(() => p.close())

/** Every meta.json under a directory, as text. */
function metas(dir: string): string[] {
  const out: string[] = []
  if (!fs.existsSync(dir)) return out
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const f = path.join(dir, e.name)
    if (e.isDirectory()) out.push(...metas(f))
    else if (e.name === 'meta.json') out.push(fs.readFileSync(f, 'utf8'))
  }
  return out
}

it(`answers ${COUNT} hostile requests (seed ${SEED}) without a crash, a 5xx, a bare answer or a trace on disk`, async () => {
  const cases = generate(SEED, COUNT)
  const rss0 = process.memoryUsage().rss
  const problems: Record<string, { example: string; count: number }> = {}
  const note = (what: string, c: FuzzCase, detail: string): void => {
    const key = `${what} (${c.kind})`
    problems[key] ??= {
      example: `#${c.i} ${c.method} ${c.path} ${JSON.stringify(c.headers)} ${c.body.toString('latin1').slice(0, 200)} → ${detail}`,
      count: 0,
    }
    problems[key].count++
  }
  const touched = new Set<string>()
  let next = 0
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (;;) {
        const c = cases[next++]
        if (!c) return
        let a
        try {
          a = await send(p.url, c)
        } catch (err) {
          note('no answer', c, String(err))
          continue
        }
        if (a.status >= 500) note('5xx', c, `${a.status} ${a.body.toString().slice(0, 200)}`)
        if (a.status >= 400 && !inEnvelope(c, a))
          note('not in an envelope', c, `${a.status} ${a.body.toString().slice(0, 200)}`)
        if (c.valid && a.status !== 200)
          note('valid request refused', c, `${a.status} ${a.body.toString().slice(0, 200)}`)
        if (a.status >= 400 && c.workspace && fs.existsSync(path.join(p.home, 'workspaces', c.workspace)))
          note('refused but left a workspace on disk', c, String(a.status))
        if (a.status < 400 && c.kind !== 'options')
          touched.add(`${c.path.startsWith('/w/') ? c.path.split('/')[2] : 'default'}\0${c.agent}`)
      }
    }),
  )
  await p.settled()
  // One bad request must not brick an agent: each agent that took requests answers a good one.
  const agents = [...new Set(cases.map((c) => c.agent))]
  for (const agent of agents) {
    const c: FuzzCase = {
      ...cases[0]!,
      kind: 'after',
      method: 'POST',
      path: `/w/fzshared/a/${agent}/v1/messages`,
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: Buffer.from(
        JSON.stringify({
          model: 'claude-sonnet-4-5',
          max_tokens: 8,
          messages: [{ role: 'user', content: 'still there?' }],
        }),
      ),
    }
    const a = await send(p.url, c)
    if (a.status !== 200) note('agent bricked', c, `${a.status} ${a.body.toString().slice(0, 200)}`)
  }
  const health = await fetch(`${p.url}/_holdfast/health`)
  expect(health.status).toBe(200)
  const leaked = metas(path.join(p.home, 'workspaces')).filter((m) => m.includes('fz-secret-'))
  if (leaked.length > 0)
    problems['credential in a record'] = { example: leaked[0]!.slice(0, 300), count: leaked.length }
  const grownMb = (process.memoryUsage().rss - rss0) / 1048576
  if (grownMb > 400) problems['memory'] = { example: `RSS grew ${grownMb.toFixed(0)} MB`, count: 1 }
  if (Object.keys(problems).length > 0) {
    throw new Error(
      `fuzz seed ${SEED}, ${COUNT} requests (rerun: HOLDFAST_FUZZ_SEED=${SEED}):\n` +
        Object.entries(problems)
          .map(([k, v]) => `  ${k}: ${v.count}× e.g. ${v.example}`)
          .join('\n'),
    )
  }
  expect(touched.size).toBeGreaterThan(0)
}, 120_000)
