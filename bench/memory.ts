/**
 * Memory under many agents: the built proxy (`npm run build` first) takes N requests of about
 * 10 KB spread over A agents (each agent's conversation grows one turn per request), against the
 * fake upstream in lite mode; prints the proxy's RSS after every quarter and at the end, and the
 * previous-request cache it holds. Run: `node -r ./scripts/register.js bench/memory.ts
 * [requests=10000] [agents=2500] [concurrency=16]`. Measures; asserts nothing.
 */
import fs from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { filler, health as healthOf, rssMb, startFake, startHoldfast } from './procs'

const [N = 10_000, A = 2_500, C = 16] = process.argv.slice(2).map(Number)

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 })
function post(url: string, body: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          'content-length': body.length,
          'anthropic-version': '2023-06-01',
        },
      },
      (res) => {
        res.resume()
        res.on('end', () => resolve(res.statusCode ?? 0))
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}

const text = filler(10_000)
function body(agentIx: number, turn: number): Buffer {
  const messages: object[] = [{ role: 'user', content: `agent ${agentIx} ${text}` }]
  for (let t = 1; t <= turn; t++)
    messages.push({ role: 'assistant', content: `ok ${t}` }, { role: 'user', content: `turn ${t}` })
  return Buffer.from(
    JSON.stringify({
      model: 'claude-sonnet-4-5',
      max_tokens: 16,
      system: 'You are a benchmark.',
      tools: [{ name: 'Read', input_schema: { type: 'object' } }],
      messages,
    }),
  )
}

async function main(): Promise<void> {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'holdfast-memory-'))
  const fake = await startFake()
  const proxy = await startHoldfast(home, {
    listen: { host: '127.0.0.1', port: 0 },
    defaults: { workspace: 'mem', agent: 'main' },
    providers: {
      anthropic: { dialect: 'anthropic', base_url: fake.url },
      openai: { dialect: 'openai', base_url: `${fake.url}/v1` },
    },
    maintenance: { gc_every_steps: 0 },
  })
  const pid = proxy.child.pid as number
  console.log(`proxy idle: RSS ${rssMb(pid).toFixed(0)} MB`)
  let next = 0
  let failed = 0
  const t0 = Date.now()
  const lanes = Array.from({ length: C }, async () => {
    for (;;) {
      const i = next++
      if (i >= N) return
      const a = i % A
      const status = await post(`${proxy.url}/w/mem/a/a${a}/v1/messages`, body(a, Math.floor(i / A)))
      if (status !== 200) failed++
      if ((i + 1) % Math.ceil(N / 4) === 0)
        console.log(`after ${i + 1} requests: RSS ${rssMb(pid).toFixed(0)} MB`)
    }
  })
  await Promise.all(lanes)
  const loaded = Date.now()
  // Every answered step is committed before memory is read: the commit backlog is not a leak.
  type Health = {
    previous_cache?: { bytes: number; agents: number }
    memory_mb: Record<string, number>
    agents: { next_step: number; committed: number; stalled: string | null }[]
  }
  const getHealth = (): Promise<Health> => healthOf<Health>(proxy)
  const behind = (h: Health): number => h.agents.reduce((n, a) => n + (a.next_step - 1 - a.committed), 0)
  console.log(`commits behind when the last answer came: ${behind(await getHealth())}`)
  let health = await getHealth()
  const stalled = (h: Health): number => h.agents.filter((a) => a.stalled).length
  while (behind(health) > 0 && stalled(health) === 0) {
    await new Promise((r) => setTimeout(r, 100))
    health = await getHealth()
  }
  if (stalled(health) > 0)
    console.log(`${stalled(health)} agents stalled: ${health.agents.find((a) => a.stalled)?.stalled}`)
  console.log(`all committed ${((Date.now() - loaded) / 1000).toFixed(1)} s after the last answer`)
  await new Promise((r) => setTimeout(r, 3000)) // a scheduled repack, if any, runs
  health = await getHealth()
  console.log(
    `${N} requests over ${A} agents (c=${C}) in ${((Date.now() - t0) / 1000).toFixed(1)} s, ${failed} not 200`,
  )
  console.log(
    `proxy RSS at the end: ${rssMb(pid).toFixed(0)} MB; main thread heap used ${health.memory_mb.heapUsed} of ${health.memory_mb.heapTotal} MB, external ${health.memory_mb.external} MB (array buffers ${health.memory_mb.arrayBuffers}); previous-request cache ${((health.previous_cache?.bytes ?? 0) / 1048576).toFixed(1)} MB over ${health.previous_cache?.agents} agents`,
  )
  proxy.child.kill('SIGTERM')
  fake.child.kill('SIGTERM')
  await new Promise((r) => proxy.child.once('exit', r))
  fs.rmSync(home, { recursive: true, force: true })
  agent.destroy()
}

void main()
