/**
 * holdfast installed like any CLI: `npm pack` of a copy of this checkout (its own `prepare` build),
 * `npm install -g --prefix <scratch>` of the tarball, then the installed `holdfast` run from a
 * directory outside the checkout: `--help` and `--version`, `serve` recording a step (its git hook
 * baked with the installed paths), `run -- claude` with the real Claude Code against the fake
 * upstream. Also: no devDependency is installed, the
 * user docs ship with every relative link resolving inside the package, the shipped type
 * declarations import only shipped files, and LICENSE is there. Needs the registry (as `npm ci`
 * does) for the package's dependencies; npm's cache makes a second run quick.
 * `HOLDFAST_TEST_TARBALL=<file>` installs that tarball instead of packing one (CI packs once and
 * installs it on each Node line).
 */
import { execFile, spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import readline from 'node:readline'
import { promisify } from 'node:util'
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream'
import { claudeBinary, claudeEnv } from '../support/claude-code'
import { configFor, ROOT, writeConfig } from '../support/harness'

const run = promisify(execFile)

let scratch: string
let prefix: string
let pkg: string
let elsewhere: string
let fake: FakeUpstream
const timings: Record<string, number> = {}

/** PATH with the scratch prefix's bin first (and node's own directory, whichever node runs this). */
const pathWith = (...dirs: string[]): string =>
  [...dirs, path.join(prefix, 'bin'), path.dirname(process.execPath), process.env.PATH].join(path.delimiter)

/** The installed `holdfast`, run from outside the checkout. */
function holdfast(args: string[], env: NodeJS.ProcessEnv = {}, timeout = 60_000) {
  return run(path.join(prefix, 'bin', 'holdfast'), args, {
    cwd: elsewhere,
    env: { ...process.env, PATH: pathWith(), HOLDFAST_TOKEN: '', ...env },
    timeout,
    encoding: 'utf8',
  })
}

async function timed<T>(name: string, fn: () => Promise<T>): Promise<T> {
  const t0 = Date.now()
  try {
    return await fn()
  } finally {
    timings[name] = Date.now() - t0
  }
}

/**
 * `npm pack` of a copy of the checkout's files (what git would clone), its node_modules linked:
 * the tarball's build is its own, and this checkout's dist/ is never touched. Returns its path.
 */
async function packCopy(npmEnv: NodeJS.ProcessEnv): Promise<string> {
  const src = path.join(scratch, 'src')
  const { stdout } = await run('git', ['ls-files', '-co', '--exclude-standard', '-z'], {
    cwd: ROOT,
    maxBuffer: 64 * 1024 * 1024,
  })
  for (const file of stdout.split('\0').filter(Boolean)) {
    if (!fs.existsSync(path.join(ROOT, file))) continue // deleted in the work tree
    fs.mkdirSync(path.dirname(path.join(src, file)), { recursive: true })
    fs.copyFileSync(path.join(ROOT, file), path.join(src, file))
  }
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(src, 'node_modules'))
  const packed = await timed('npm pack', () =>
    run('npm', ['pack', '--silent', '--pack-destination', scratch], {
      cwd: src,
      env: npmEnv,
      timeout: 240_000,
    }),
  )
  return path.join(scratch, packed.stdout.trim().split('\n').pop() ?? '')
}

beforeAll(async () => {
  scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'holdfast-install-')))
  prefix = path.join(scratch, 'prefix')
  elsewhere = path.join(scratch, 'elsewhere')
  fs.mkdirSync(elsewhere)
  // npm is not holdfast: the options CI gives holdfast's own processes (--throw-deprecation) stay off it.
  const { NODE_OPTIONS: _ours, ...inherited } = process.env
  const npmEnv = { ...inherited, PATH: pathWith(), npm_config_update_notifier: 'false' }
  // HOLDFAST_TEST_TARBALL: a tarball packed once for several runs (.ci/run, one per Node line).
  const tarball = process.env.HOLDFAST_TEST_TARBALL ?? (await packCopy(npmEnv))
  await timed('npm install -g', () =>
    run('npm', ['install', '-g', '--prefix', prefix, '--no-audit', '--no-fund', tarball], {
      cwd: scratch,
      env: npmEnv,
      timeout: 300_000,
    }),
  )
  pkg = path.join(prefix, 'lib', 'node_modules', 'holdfast')
  fake = await startFakeUpstream()
}, 600_000)

afterAll(async () => {
  await fake?.close()
  if (process.env.HOLDFAST_TEST_LOG)
    process.stderr.write(`install timings (ms): ${JSON.stringify(timings)}\n`)
  fs.rmSync(scratch, { recursive: true, force: true })
})

describe('the installed package', () => {
  it('answers --help and --version from a directory outside the checkout', async () => {
    const help = await holdfast(['--help'])
    for (const command of ['serve', 'run', 'agents', 'steps', 'why', 'roles', 'remote'])
      expect(help.stdout).toMatch(new RegExp(`^  ${command} `, 'm'))
    const version = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      version: string
    }
    expect((await holdfast(['--version'])).stdout.trim()).toBe(version.version)
    expect((await holdfast(['remote', '--help'])).stdout).toMatch(/set .*\n.*pull .*\n.*fetch .*\n.*show /s)
  })

  it('installs no devDependency, and ships LICENSE, the user docs with working links, and whole type declarations', () => {
    // A package the lock file has only as dev (devDependencies and what only they need, at any
    // depth) must not be there.
    const lock = JSON.parse(fs.readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { dev?: boolean }>
    }
    const nameOf = (p: string): string => p.slice(p.lastIndexOf('node_modules/') + 'node_modules/'.length)
    const prod = new Set(
      Object.entries(lock.packages)
        .filter(([p, v]) => p !== '' && v.dev !== true)
        .map(([p]) => nameOf(p)),
    )
    const devOnly = [
      ...new Set(
        Object.keys(lock.packages)
          .filter((p) => p !== '')
          .map(nameOf),
      ),
    ].filter((n) => !prod.has(n))
    expect(devOnly).toEqual(expect.arrayContaining(['@anthropic-ai/claude-code', 'jest', 'typescript']))
    expect(devOnly.filter((d) => fs.existsSync(path.join(pkg, 'node_modules', d)))).toEqual([])
    expect(fs.readFileSync(path.join(pkg, 'LICENSE'), 'utf8')).toMatch(/^MIT License/)
    const docs = [
      'README.md',
      'plugins/README.md',
      ...fs
        .readdirSync(path.join(pkg, 'docs'))
        .filter((f) => f.endsWith('.md'))
        .map((f) => `docs/${f}`),
    ]
    expect(docs).toEqual(expect.arrayContaining(['docs/remote.md', 'docs/configuration.md', 'docs/roles.md']))
    const dead: string[] = []
    for (const doc of docs) {
      const text = fs.readFileSync(path.join(pkg, doc), 'utf8')
      for (const m of text.matchAll(/\]\(([^)\s#:]+)(#[^)]*)?\)/g)) {
        const target = path.join(pkg, path.dirname(doc), m[1] as string)
        if (!fs.existsSync(target)) dead.push(`${doc} → ${m[1]}`)
      }
    }
    expect(dead).toEqual([])
    const missing: string[] = []
    const walk = (dir: string): string[] =>
      fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
        const p = path.join(dir, e.name)
        return e.isDirectory() ? walk(p) : [p]
      })
    const files = walk(path.join(pkg, 'dist'))
    expect(files.some((f) => f.endsWith('.map'))).toBe(false)
    for (const f of files.filter((x) => x.endsWith('.d.ts'))) {
      for (const m of fs.readFileSync(f, 'utf8').matchAll(/from '(\.{1,2}\/[^']+)'/g)) {
        const base = path.resolve(path.dirname(f), m[1] as string)
        if (!['.d.ts', '/index.d.ts'].some((ext) => fs.existsSync(base + ext))) missing.push(`${f}: ${m[1]}`)
      }
    }
    expect(missing).toEqual([])
  })

  it('serves and records a step, its workspace hook baked with the installed paths', async () => {
    const home = path.join(scratch, 'home-serve')
    fs.mkdirSync(home)
    writeConfig(home, configFor(fake))
    const child = spawn(path.join(prefix, 'bin', 'holdfast'), ['serve', '--home', home, '--port', '0'], {
      cwd: elsewhere,
      env: { ...process.env, PATH: pathWith(), HOLDFAST_TOKEN: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const exited = new Promise((r) => child.once('exit', r))
    try {
      const line = await new Promise<string>((resolve, reject) => {
        readline.createInterface({ input: child.stdout as NodeJS.ReadableStream }).once('line', resolve)
        child.once('exit', (code) => reject(new Error(`serve exited with ${code}`)))
      })
      const url = /listening on (\S+)/.exec(line)?.[1] as string
      const res = await fetch(`${url}/w/proj/a/main/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
        body: JSON.stringify({
          model: 'claude-fake-1',
          max_tokens: 8,
          messages: [{ role: 'user', content: 'hi' }],
        }),
      })
      expect(res.status).toBe(200)
      await res.arrayBuffer()
    } finally {
      child.kill('SIGTERM')
      await exited
    }
    const steps = JSON.parse(
      (await holdfast(['steps', 'proj', 'main', '--home', home, '--json'])).stdout,
    ) as {
      state: string
    }[]
    expect(steps.map((s) => s.state)).toEqual(['committed'])
    const hook = fs.readFileSync(
      path.join(home, 'workspaces', 'proj', 'repo.git', 'hooks', 'reference-transaction'),
      'utf8',
    )
    expect(hook).toContain(path.join(pkg, 'dist', 'cli', 'entry.js'))
  })

  it('runs the real Claude Code through `holdfast run`, starting serve for it and recording its steps', async () => {
    const home = path.join(scratch, 'home-run')
    const claudeHome = path.join(scratch, 'claude-home')
    fs.mkdirSync(home)
    fs.mkdirSync(claudeHome)
    writeConfig(home, configFor(fake))
    const env = claudeEnv(claudeHome, 'unused')
    delete env.ANTHROPIC_BASE_URL // holdfast run sets it
    const r = await holdfast(
      ['run', '--home', home, '--ws', 'proj', '--', 'claude', '-p', 'say hi', '--output-format', 'json'],
      { ...env, PATH: pathWith(path.dirname(claudeBinary())), HOLDFAST_TOKEN: '' },
      180_000,
    )
    expect(JSON.parse(r.stdout) as { type: string }).toMatchObject({ type: 'result' })
    const agents = JSON.parse((await holdfast(['agents', 'proj', '--home', home, '--json'])).stdout) as {
      agent: string
      steps: number
    }[]
    expect(agents.find((a) => a.agent === 'main')?.steps).toBeGreaterThan(0)
  })
})
