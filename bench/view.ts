/**
 * The web view's costs (docs/view.md): a 1000-step agent recorded through the built `holdfast serve`
 * and the fake upstream, then the agent page's render (GET, cold and warm), a step page's, the export of
 * the agent, and `holdfast statusline`'s wall time against `node -e 0` (spawned as Claude Code runs
 * it, from the build: `npm run bench:view` builds first).
 * Usage: node -r ./scripts/register.js bench/view.ts [steps=1000] [runs=15]
 */
import { spawn } from 'node:child_process'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { exportHtml } from '../proxy/view/export'
import { startFakeUpstream } from '../test/support/fake-upstream'
import { mainStep, sendStep } from '../test/support/view-demo'
import { serveHome } from './procs'

const STEPS = Number(process.argv[2] ?? 1000)
const RUNS = Number(process.argv[3] ?? 15)
const ROOT = path.join(__dirname, '..')

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number
const ms = (n: number): string => `${n.toFixed(1)} ms`

async function timed<T>(fn: () => Promise<T>): Promise<[number, T]> {
  const t0 = performance.now()
  const out = await fn()
  return [performance.now() - t0, out]
}

async function main(): Promise<void> {
  const fake = await startFakeUpstream()
  const p = await serveHome(fake)
  try {
    const t0 = performance.now()
    for (let i = 1; i <= STEPS; i++) {
      // A conversation that grows by a turn per step (its last 40 turns: the request stays ~10 KB).
      const body = mainStep(Math.min(i, 40), i % 50 === 0 ? ['Read', 'Write'] : ['Read', 'Write', 'Bash'])
      await sendStep(p, 'bench', 'main', body, { 'x-claude-code-session-id': 'bench-session' })
    }
    await p.settled()
    process.stdout.write(`recorded ${STEPS} steps in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`)
    const headers = { 'x-holdfast-token': p.token }
    const page = async (url: string): Promise<number> => {
      const [t, size] = await timed(
        async () => (await (await fetch(p.url + url, { headers })).arrayBuffer()).byteLength,
      )
      if (size < 100) throw new Error(`${url} answered ${size} bytes`)
      return t
    }
    const agentUrl = '/ui/w/bench/a/main'
    const cold = await page(agentUrl)
    const warm: number[] = []
    for (let i = 0; i < RUNS; i++) warm.push(await page(agentUrl))
    const size = (await (await fetch(p.url + agentUrl, { headers })).arrayBuffer()).byteLength
    process.stdout.write(
      `agent page (${STEPS} steps, ${Math.round(size / 1024)} KB): first ${ms(cold)}, then median ${ms(median(warm))} of ${RUNS}\n`,
    )
    for (const n of [STEPS, Math.ceil(STEPS / 2), 1]) {
      const stepTimes: number[] = []
      for (let i = 0; i < 5; i++) stepTimes.push(await page(`${agentUrl}/s/${String(n).padStart(3, '0')}`))
      process.stdout.write(`step page (step ${n} of ${STEPS}): median ${ms(median(stepTimes))} of 5\n`)
    }
    const [exportMs, doc] = await timed(() => exportHtml(p.home, 'bench', 'main'))
    process.stdout.write(
      `export of the agent: ${ms(exportMs)}, ${Math.round(Buffer.byteLength(doc) / 1024)} KB\n`,
    )
    const input = JSON.stringify({ session_id: 'bench-session' })
    const run = (args: string[]): Promise<{ ms: number; out: string }> =>
      new Promise((resolve, reject) => {
        const t = performance.now()
        const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] })
        let out = ''
        child.stdout.on('data', (c: Buffer) => (out += c.toString()))
        child.on('error', reject)
        child.on('close', () => resolve({ ms: performance.now() - t, out }))
        child.stdin.end(input)
      })
    const bare: number[] = []
    const line: number[] = []
    let shown = ''
    for (let i = 0; i < RUNS + 2; i++) {
      const a = await run(['-e', '0'])
      const b = await run([path.join(ROOT, 'bin', 'holdfast.js'), 'statusline', '--home', p.home])
      if (i < 2) continue // warm-up
      bare.push(a.ms)
      line.push(b.ms)
      shown = b.out.trim()
    }
    process.stdout.write(
      `statusline: median ${ms(median(line))} against node -e 0 ${ms(median(bare))} (x${(median(line) / median(bare)).toFixed(2)}, ${RUNS} runs each, alternated)\n` +
        `  its line: ${shown}\n`,
    )
  } finally {
    await p.close()
    await fake.close()
  }
}

void main()
