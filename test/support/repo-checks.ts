/**
 * Checks on a workspace repository for the integration tests: many blobs read in one
 * `git cat-file --batch`, an agent branch's shape (linear, numbered 001.. in order), fsck, and an
 * async git for polling beside a running server. Invariant: read-only; nothing here moves a ref.
 */
import { execFile, spawn, spawnSync } from 'node:child_process'
import { REGISTER, CLI, ROOT } from './harness'

/** Read `rev:path` blobs in one git process; a missing one maps to undefined. */
export function catBlobs(repo: string, specs: string[]): Map<string, Buffer | undefined> {
  const r = spawnSync('git', ['-C', repo, 'cat-file', '--batch'], {
    input: specs.map((s) => `${s}\n`).join(''),
    maxBuffer: 256 * 1024 * 1024,
  })
  if (r.status !== 0) throw new Error(`git cat-file --batch failed: ${r.stderr.toString()}`)
  return parseBatch(specs, r.stdout)
}

/** `catBlobs` without blocking the event loop. */
export function catBlobsAsync(repo: string, specs: string[]): Promise<Map<string, Buffer | undefined>> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', ['-C', repo, 'cat-file', '--batch'], { stdio: ['pipe', 'pipe', 'pipe'] })
    const out: Buffer[] = []
    let err = ''
    child.stdout.on('data', (d: Buffer) => out.push(d))
    child.stderr.on('data', (d: Buffer) => (err += d.toString()))
    child.once('error', reject)
    child.once('close', (code) => {
      if (code !== 0) reject(new Error(`git cat-file --batch failed: ${err}`))
      else resolve(parseBatch(specs, Buffer.concat(out)))
    })
    child.stdin.end(specs.map((s) => `${s}\n`).join(''))
  })
}

function parseBatch(specs: string[], buf: Buffer): Map<string, Buffer | undefined> {
  const out = new Map<string, Buffer | undefined>()
  let at = 0
  for (const spec of specs) {
    const nl = buf.indexOf(0x0a, at)
    const header = buf.subarray(at, nl).toString('utf8')
    at = nl + 1
    if (header.endsWith(' missing') || header.endsWith(' ambiguous')) {
      out.set(spec, undefined)
      continue
    }
    const size = Number(header.split(' ')[2])
    out.set(spec, buf.subarray(at, at + size))
    at += size + 1 // the blob, then a newline
  }
  return out
}

/** Run git without blocking the event loop; resolves with stdout, rejects on a non-zero exit. */
export function gitAsync(repo: string, ...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('git', ['-C', repo, ...args], { maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`git ${args.join(' ')} failed: ${stderr || err.message}`))
      else resolve(stdout)
    })
  })
}

export interface BranchShape {
  /** Commit subjects, newest first (the root `config: …` commit last). */
  subjects: string[]
  /** Commits with more than one parent (a linear branch has none). */
  merges: number
  /** Commits reachable from the tip. */
  count: number
}

export async function branchShape(repo: string, agent: string): Promise<BranchShape> {
  const ref = `refs/heads/agents/${agent}`
  const [log, merges, count] = await Promise.all([
    gitAsync(repo, 'log', '--format=%s', ref),
    gitAsync(repo, 'rev-list', '--min-parents=2', ref),
    gitAsync(repo, 'rev-list', '--count', ref),
  ])
  return {
    subjects: log.trim().split('\n'),
    merges: merges.trim() === '' ? 0 : merges.trim().split('\n').length,
    count: Number(count.trim()),
  }
}

/** The subjects a linear branch of steps 001..n of one model has, newest first, root last. */
export function expectedSubjects(agent: string, n: number, model: string): string[] {
  const steps = Array.from(
    { length: n },
    (_, i) => `step ${String(n - i).padStart(3, '0')}: ${model} [${agent}]`,
  )
  return [...steps, 'config: starter providers.yaml']
}

/** `git fsck --strict` findings other than dangling objects (which a crash may leave); '' when clean. */
export async function fsckProblems(repo: string): Promise<string> {
  const out = await new Promise<{ code: number | null; text: string }>((resolve) => {
    execFile('git', ['-C', repo, 'fsck', '--strict', '--no-dangling', '--no-progress'], (err, so, se) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, text: `${so}${se}` }),
    )
  })
  return out.code === 0 ? out.text.trim() : `exit ${out.code}: ${out.text.trim()}`
}

export interface Run {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

/**
 * Run the CLI asynchronously (several can run at once, and an in-process server keeps serving);
 * a command still running after `timeoutMs` is killed and reported with its signal.
 */
export function cliAsync(args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 45_000): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['-r', REGISTER, CLI, ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.once('close', (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, stdout, stderr })
    })
  })
}

/**
 * Damage a committed record the way a hand edit of the branch (or an old version) could: a new
 * commit on `agents/<agent>` whose `steps/<agent>/<NNN>/request.json` holds `bytes`, or is a
 * directory when `bytes` is `'directory'`. Built with git's own plumbing on a scratch index.
 */
export function damageRecord(repo: string, agent: string, step: string, bytes: string | 'directory'): void {
  const index = `${repo}/damage-index`
  const env = { ...process.env, GIT_INDEX_FILE: index }
  const run = (args: string[], input?: string): string => {
    const r = spawnSync('git', ['-C', repo, ...args], { env, input, encoding: 'utf8' })
    if (r.status !== 0) throw new Error(`git ${args.join(' ')} failed: ${r.stderr}`)
    return r.stdout.trim()
  }
  const file = `steps/${agent}/${step}/request.json`
  const tip = run(['rev-parse', `refs/heads/agents/${agent}`])
  run(['read-tree', tip])
  const blob = run(['hash-object', '-w', '--stdin'], bytes === 'directory' ? 'x' : bytes)
  // --index-info needs no work tree: mode 0 removes an entry.
  const target = bytes === 'directory' ? `${file}/x` : file
  run(['update-index', '--index-info'], `0 ${'0'.repeat(40)}\t${file}\n100644 ${blob}\t${target}\n`)
  const tree = run(['write-tree'])
  const commit = run(['commit-tree', tree, '-p', tip, '-m', `damage ${file}`])
  run(['update-ref', `refs/heads/agents/${agent}`, commit, tip])
  spawnSync('rm', ['-f', index])
}
