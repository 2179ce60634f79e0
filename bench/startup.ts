/**
 * Start-up times (docs/benchmarks.md): `holdfast --help`, and `holdfast serve` to its listening line
 * on a fresh home without and with an OTLP endpoint set (nothing listens there: the exporter is
 * built, never reached), medians of `runs`, each against `node -e 0` on this machine. Nothing is
 * asserted. `node -r ./scripts/register.js bench/startup.ts [runs]` after `npm run build`.
 */
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { pct, ROOT, start } from './procs'

const RUNS = Number(process.argv[2] ?? 7)
const ENTRY = path.join(ROOT, 'dist', 'cli', 'entry.js')

function timed(args: string[]): number {
  const t0 = performance.now()
  const r = spawnSync(process.execPath, args, { stdio: 'ignore' })
  if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}`)
  return performance.now() - t0
}

async function serveStart(env: Record<string, string>): Promise<number> {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'holdfast-startup-'))
  try {
    const t0 = performance.now()
    const p = await start([ENTRY, 'serve', '--home', home, '--port', '0'], {
      HOLDFAST_LOG_LEVEL: 'warn',
      ...env,
    })
    const ms = performance.now() - t0
    const exited = new Promise((r) => p.child.once('exit', r))
    p.child.kill('SIGTERM')
    await exited
    return ms
  } finally {
    fs.rmSync(home, { recursive: true, force: true })
  }
}

async function main(): Promise<void> {
  const node: number[] = []
  const help: number[] = []
  const off: number[] = []
  const on: number[] = []
  for (let i = 0; i < RUNS; i++) {
    node.push(timed(['-e', '0']))
    help.push(timed([ENTRY, '--help']))
    off.push(await serveStart({}))
    on.push(await serveStart({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' }))
  }
  const m = (xs: number[]): string => `${pct(xs, 50).toFixed(0)} ms`
  process.stdout.write(
    [
      `| start-up, median of ${RUNS} | ms |`,
      '| --- | --- |',
      `| node -e 0 | ${m(node)} |`,
      `| holdfast --help | ${m(help)} |`,
      `| holdfast serve to its listening line, no OTLP endpoint | ${m(off)} |`,
      `| holdfast serve to its listening line, OTEL_EXPORTER_OTLP_ENDPOINT set | ${m(on)} |`,
    ].join('\n') + '\n',
  )
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
