/**
 * kill -9 rounds against the built `holdfast serve` (`npm run build` first):
 * `node -r ./scripts/register.js bench/kill.ts [rounds=100]`. Odd rounds kill 0–5 ms after
 * the client read the last byte of a step's answer; even rounds kill a staggered burst over four
 * agents at a random moment. After each restart (recovery runs before the listening line) it
 * checks every acknowledged answer (a 200 the client read to its end) is committed with outcome
 * ok and the same bytes, and every request the provider received is a committed step. Prints
 * rounds / acknowledged steps / responses lost / requests lost / fsck problems. Asserts nothing.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import readline from 'node:readline'
import { agentRef } from '../proxy/core/layout'
import { startFakeUpstream } from '../test/support/fake-upstream'

const ROOT = path.join(__dirname, '..')
const ROUNDS = Number(process.argv[2] ?? 100)
const MODEL = 'claude-sonnet-4-5'

async function serve(home: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(
    process.execPath,
    [path.join(ROOT, 'dist', 'cli', 'entry.js'), 'serve', '--home', home, '--port', '0'],
    {
      env: { ...process.env, HOLDFAST_LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'ignore'],
    },
  )
  const line = await new Promise<string>((resolve, reject) => {
    readline.createInterface({ input: child.stdout as NodeJS.ReadableStream }).once('line', resolve)
    child.once('exit', (code) => reject(new Error(`serve exited ${code}`)))
  })
  return { child, url: /(http:\/\/\S+)/.exec(line)?.[1] as string }
}

const kill = (child: ChildProcess): Promise<void> =>
  new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    child.once('exit', () => resolve())
    child.kill('SIGKILL')
  })

interface Acked {
  agent: string
  mark: string
  bytes: Buffer
}

function step(url: string, agent: string, mark: string, stream: boolean): Promise<Acked | undefined> {
  const body = JSON.stringify({
    model: MODEL,
    max_tokens: 16,
    stream,
    messages: [{ role: 'user', content: mark }],
  })
  return new Promise((resolve) => {
    const req = http.request(`${url}/w/default/a/${agent}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', connection: 'close' },
    })
    req.on('response', (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () =>
        resolve(
          res.statusCode === 200 && res.complete ? { agent, mark, bytes: Buffer.concat(chunks) } : undefined,
        ),
      )
      res.on('error', () => resolve(undefined))
      res.on('aborted', () => resolve(undefined))
    })
    req.on('error', () => resolve(undefined))
    req.end(body)
  })
}

const git = (repo: string, ...args: string[]): Buffer =>
  execFileSync('git', ['-C', repo, ...args], { maxBuffer: 1 << 28, stdio: ['ignore', 'pipe', 'ignore'] })

interface Committed {
  request: string
  meta: { outcome?: string; response_file?: string }
  response?: Buffer
}
/** What was read of each agent's branch so far: its steps in order (a branch only grows). */
const seen = new Map<string, Committed[]>()

/** Every committed step of an agent (read from git once each): request text, meta, response bytes. */
function committed(repo: string, agent: string): Committed[] {
  const known = seen.get(agent) ?? []
  let names: string[]
  try {
    names = git(repo, 'ls-tree', '--name-only', agentRef(agent), `steps/${agent}/`)
      .toString()
      .trim()
      .split('\n')
      .filter(Boolean)
  } catch {
    return known
  }
  for (const dir of names.slice(known.length)) {
    const meta = JSON.parse(
      git(repo, 'show', `agents/${agent}:${dir}/meta.json`).toString(),
    ) as Committed['meta']
    const response = meta.response_file
      ? git(repo, 'show', `agents/${agent}:${dir}/${meta.response_file}`)
      : undefined
    known.push({
      request: git(repo, 'show', `agents/${agent}:${dir}/request.json`).toString(),
      meta,
      response,
    })
  }
  seen.set(agent, known)
  return known
}

async function main(): Promise<void> {
  const fake = await startFakeUpstream()
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'holdfast-kill-'))
  fs.writeFileSync(
    path.join(home, 'holdfast.yaml'),
    JSON.stringify({
      listen: { host: '127.0.0.1', port: 0 },
      defaults: { workspace: 'default', agent: 'main' },
      providers: {
        anthropic: { dialect: 'anthropic', base_url: fake.anthropicBaseUrl },
        openai: { dialect: 'openai', base_url: fake.openaiBaseUrl },
      },
      maintenance: { gc_every_steps: 0 },
    }),
  )
  const repo = path.join(home, 'workspaces', 'default', 'repo.git')
  const acked: Acked[] = []
  const agents = ['b1', 'b2', 'b3', 'b4', 'after']
  let server = await serve(home)
  for (let round = 1; round <= ROUNDS; round++) {
    fake.reset()
    if (round % 2 === 1) {
      // Killed 0–5 ms after the client read the last byte of an answer.
      const a = await step(server.url, 'after', `round ${round} after`, round % 4 === 1)
      if (a) acked.push(a)
      const delay = Math.floor(round / 2) % 6
      if (delay > 0) await new Promise((r) => setTimeout(r, delay))
      await kill(server.child)
    } else {
      for (let i = 0; i < 11; i++) fake.enqueue({ delayMs: Math.floor(Math.random() * 100) })
      const burst = Array.from({ length: 12 }, async (_, i) => {
        await new Promise((r) => setTimeout(r, i * 10))
        return step(server.url, agents[i % 4] as string, `round ${round} burst ${i}`, i % 3 === 0)
      })
      await new Promise((r) => setTimeout(r, 20 + Math.floor(Math.random() * 250)))
      await kill(server.child)
      for (const a of await Promise.all(burst)) if (a) acked.push(a)
    }
    const received = fake.received.map((r) => r.body.toString())
    server = await serve(home) // recovery runs before the listening line
    const all = new Map(agents.map((a) => [a, committed(repo, a)]))
    // requests lost: a body the provider received that no committed step holds
    const bodies = new Set([...all.values()].flat().map((s) => s.request))
    for (const body of received) if (!bodies.has(body)) lostRequests++
    process.stderr.write(`round ${round}: ${acked.length} acknowledged so far\r`)
  }
  await kill(server.child)
  // responses lost: an acknowledged answer whose step is not committed ok with those bytes
  const all = new Map(agents.map((a) => [a, committed(repo, a)]))
  let lostResponses = 0
  for (const a of acked) {
    const s = all.get(a.agent)?.find((x) => x.request.includes(`"${a.mark}"`))
    if (!s || s.meta.outcome !== 'ok' || !s.response?.equals(a.bytes)) lostResponses++
  }
  let fsck: string
  try {
    fsck = execFileSync('git', ['-C', repo, 'fsck', '--strict', '--no-progress'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
      .toString()
      .trim()
  } catch (err) {
    fsck = String((err as { stderr?: Buffer }).stderr ?? err)
  }
  console.log(
    `kill rounds ${ROUNDS} / acknowledged steps ${acked.length} / responses lost ${lostResponses} / requests lost ${lostRequests} / git fsck --strict: ${fsck === '' ? 'clean' : fsck}`,
  )
  await fake.close()
  fs.rmSync(home, { recursive: true, force: true })
}

let lostRequests = 0
void main()
