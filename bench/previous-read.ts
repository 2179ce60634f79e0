/**
 * The previous request read back from git after a restart, by the deepest delta chain the store
 * writes: one agent's long conversation (test/support/conversation: ~41 KB growing by ~5 KB a step)
 * committed step by step as the commit worker does when steps come one at a time, for two agents
 * (`main` and `other`, taking turns); then, in a fresh process each time (nothing cached: what the
 * hold meets after a restart), the last step's request.json and meta.json read as holdfast's record
 * does (`readCommittedFile`, record/read): `other`'s first (the code's first use), then `main`'s
 * (its pack not read yet: an agent's first step after a restart), then `main`'s step before (its
 * pack read already). Prints per depth those times (p50 of `tries` processes), the delta depth of the request read
 * (`git verify-pack`), the repository's size against the final request, and the commit CPU per step.
 * A depth other than the build's runs a copy of dist/ with `MAX_DELTA_DEPTH` changed, under
 * .bench/. Built holdfast (`npm run build` first). Run: `node -r ./scripts/register.js
 * bench/previous-read.ts [steps=150] [depths=24] [tries=5]` (depths: comma-separated). Asserts nothing.
 */
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Conversation } from '../test/support/conversation'
import { pct } from './procs'

const ROOT = path.join(__dirname, '..')

interface Dist {
  Workspace: new (home: string, name: string) => { repo: unknown; ensure(): Promise<void> }
  commitSteps: (repo: unknown, steps: readonly object[]) => Promise<unknown>
  readCommittedFile: (ws: unknown, agent: string, n: number, file: string) => Promise<Buffer | undefined>
  retired: () => Promise<void>
}

function load(dist: string): Dist {
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { Workspace } = require(path.join(dist, 'proxy', 'store', 'workspace')) as Pick<Dist, 'Workspace'>
  const { commitSteps } = require(path.join(dist, 'proxy', 'record', 'commit', 'step-commits')) as Pick<
    Dist,
    'commitSteps'
  >
  const { readCommittedFile } = require(path.join(dist, 'proxy', 'record', 'read')) as Pick<
    Dist,
    'readCommittedFile'
  >
  const { retired } = require(path.join(dist, 'proxy', 'store', 'git')) as Pick<Dist, 'retired'>
  /* eslint-enable @typescript-eslint/no-require-imports */
  return { Workspace, commitSteps, readCommittedFile, retired }
}

/** dist/ as built, or a copy of it under .bench/ whose packs are written at most `depth` deltas deep. */
function distFor(depth: number): string {
  const built = path.join(ROOT, 'dist')
  const source = fs.readFileSync(path.join(built, 'proxy', 'store', 'git', 'pack.js'), 'utf8')
  const m = /exports\.MAX_DELTA_DEPTH = (\d+)/.exec(source)
  if (!m) throw new Error('dist/proxy/store/git/pack.js states no MAX_DELTA_DEPTH')
  if (Number(m[1]) === depth) return built
  const copy = path.join(ROOT, '.bench', `depth-${depth}`, 'dist')
  fs.rmSync(copy, { recursive: true, force: true })
  fs.cpSync(built, copy, { recursive: true })
  const file = path.join(copy, 'proxy', 'store', 'git', 'pack.js')
  fs.writeFileSync(file, source.replace(m[0], `exports.MAX_DELTA_DEPTH = ${depth}`))
  return copy
}

const files = (request: Buffer, n: number): Record<string, Buffer> => ({
  'request.json': request,
  'response.json': Buffer.from(JSON.stringify({ id: `msg_${n}`, content: [{ type: 'text', text: 'ok' }] })),
  'meta.json': Buffer.from(JSON.stringify({ step: n, agent: 'main', started_at: new Date().toISOString() })),
})

/** The child: read step `n`'s request and meta, then step `n - 1`'s; prints both times, ms. */
async function readChild(dist: string, home: string, n: number): Promise<void> {
  const d = load(dist)
  const ws = new d.Workspace(home, 'bench')
  const timed = async (step: number, agent = 'main'): Promise<number> => {
    const t0 = performance.now()
    const bytes = await d.readCommittedFile(ws, agent, step, 'request.json')
    await d.readCommittedFile(ws, agent, step, 'meta.json')
    if (!bytes) throw new Error(`step ${step} has no request.json`)
    return performance.now() - t0
  }
  const cold = await timed(n, 'other')
  const first = await timed(n)
  const second = await timed(n - 1)
  process.stdout.write(`${JSON.stringify({ cold, first, second })}\n`)
}

/** The depth of `oid`'s delta chain in the repository's packs (0: stored whole). */
function depthOf(gitdir: string, oid: string): number {
  const dir = path.join(gitdir, 'objects', 'pack')
  for (const idx of fs.readdirSync(dir).filter((f) => f.endsWith('.idx'))) {
    const out = execFileSync('git', ['verify-pack', '-v', path.join(dir, idx)], { encoding: 'utf8' })
    const line = out.split('\n').find((l) => l.startsWith(oid))
    // `<oid> <type> <size> <size-in-pack> <offset> [<depth> <base>]`
    if (line) return Number(line.trim().split(/\s+/)[5] ?? 0)
  }
  return NaN
}

const duBytes = (dir: string): number =>
  fs
    .readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .reduce((n, e) => n + fs.statSync(path.join(e.parentPath, e.name)).size, 0)

async function measure(depth: number, steps: number, tries: number): Promise<string> {
  const dist = distFor(depth)
  const d = load(dist)
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'holdfast-previous-read-'))
  try {
    const ws = new d.Workspace(home, 'bench')
    await ws.ensure()
    const conv = new Conversation(1)
    const other = new Conversation(2)
    let last: Buffer = Buffer.alloc(0)
    const cpu0 = process.cpuUsage()
    for (let n = 1; n <= steps; n++) {
      last = conv.next()
      await d.commitSteps(ws.repo, [{ agent: 'main', n, model: 'm', files: files(last, n) }])
      await d.commitSteps(ws.repo, [{ agent: 'other', n, model: 'm', files: files(other.next(), n) }])
    }
    const cpu = process.cpuUsage(cpu0)
    // The packs the chain replaced are gone (as they are a second after a live commit).
    // (Its timer does not hold the process open: this one does meanwhile.)
    const awake = setInterval(() => undefined, 1000)
    await d.retired()
    clearInterval(awake)
    const gitdir = path.join(home, 'workspaces', 'bench', 'repo.git')
    const oid = execFileSync('git', ['hash-object', '--stdin'], { input: last, encoding: 'utf8' }).trim()
    const reads = Array.from({ length: tries }, () => {
      const out = execFileSync(
        process.execPath,
        ['-r', path.join(ROOT, 'scripts', 'register.js'), __filename, 'read', dist, home, String(steps)],
        { encoding: 'utf8' },
      )
      return JSON.parse(out) as { cold: number; first: number; second: number }
    })
    const repo = duBytes(path.join(gitdir, 'objects'))
    const f = (x: number): string => x.toFixed(1)
    return (
      `| ${depth} | ${depthOf(gitdir, oid)} | ${f(
        pct(
          reads.map((r) => r.cold),
          50,
        ),
      )} | ${f(
        pct(
          reads.map((r) => r.first),
          50,
        ),
      )} | ` +
      `${f(
        pct(
          reads.map((r) => r.second),
          50,
        ),
      )} | ${(repo / 1048576).toFixed(2)} MB (${(repo / last.length).toFixed(2)}×) | ` +
      `${((cpu.user + cpu.system) / 1000 / steps / 2).toFixed(2)} |`
    )
  } finally {
    if (process.env.HOLDFAST_BENCH_KEEP) process.stderr.write(`kept ${home}\n`)
    else fs.rmSync(home, { recursive: true, force: true })
  }
}

async function main(): Promise<void> {
  if (process.argv[2] === 'read')
    return readChild(process.argv[3] as string, process.argv[4] as string, Number(process.argv[5]))
  const steps = Number(process.argv[2] ?? 150)
  const depths = (process.argv[3] ?? '24').split(',').map(Number)
  const tries = Number(process.argv[4] ?? 5)
  const lines = [
    `Previous request read from git after a restart: ${steps} steps of one agent, ${new Date().toISOString().slice(0, 16)}Z, load ${os.loadavg()[0]?.toFixed(2)}`,
    '',
    "| max delta depth | depth of the last request | first read in a fresh process, ms (p50) | an agent's first read after that, ms | its step before, ms | repository objects, two agents (× one final request) | commit CPU per step, ms |",
    '|---|---|---|---|---|---|---|',
  ]
  for (const depth of depths) lines.push(await measure(depth, steps, tries))
  fs.rmSync(path.join(ROOT, '.bench'), { recursive: true, force: true })
  process.stdout.write(`${lines.join('\n')}\n`)
}

main().catch((err: unknown) => {
  console.error(err)
  process.exit(1)
})
