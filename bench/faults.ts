/**
 * Disk faults against the built `holdfast serve`, on real file systems (root: it mounts them):
 * `npm run build && node -r ./scripts/register.js bench/faults.ts [scenario] [tries]`, scenario one
 * of `full` (a 24 MB tmpfs filled during a burst of 30 KB steps, then freed; restarts in between),
 * `readonly` (the repository remounted read-only, a restart during it, `holdfast recover` after),
 * `powercut` and `powercut-fsync` (ext4 on a loop device with writeback held back; the backing
 * file copied at a stopped moment mid-burst is the disk after a power cut, started from again),
 * `window` (fsync off with the kernel's own writeback: how old the oldest lost step was), or `all`
 * (default: all but `window`).
 * Each try checks, per agent: every acknowledged step (a 200 the client read whole) is committed
 * with the exact bytes the provider received (lost otherwise); every committed request is one the
 * provider received, or is recorded as not sent or cut off around its send (corrupted otherwise); numbers are never given
 * to two different requests (renumbered); the workspace serves after the fault (bricked
 * otherwise). Prints one table line per scenario. Asserts nothing; docs/reliability.md has figures.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import readline from 'node:readline'
import { startFakeUpstream, type FakeUpstream } from '../test/support/fake-upstream'

const ROOT = path.join(__dirname, '..')
const CLI = path.join(ROOT, 'dist', 'cli', 'entry.js')
const MODEL = 'claude-sonnet-4-5'
const AGENTS = ['a1', 'a2', 'a3']

const sh = (cmd: string, args: string[]): string =>
  execFileSync(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 28 }).toString()
const quiet = (cmd: string, args: string[]): void => {
  try {
    sh(cmd, args)
  } catch {
    // cleanup of a mount or device that is already gone
  }
}

interface Serve {
  child: ChildProcess
  url: string
  log: () => string
}

async function serve(home: string): Promise<Serve | undefined> {
  const child = spawn(process.execPath, [CLI, 'serve', '--home', home, '--port', '0'], {
    env: { ...process.env, HOLDFAST_LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let log = ''
  child.stderr?.on('data', (d: Buffer) => (log += d.toString()))
  try {
    const line = await new Promise<string>((resolve, reject) => {
      readline.createInterface({ input: child.stdout as NodeJS.ReadableStream }).once('line', resolve)
      child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${log}`)))
    })
    return { child, url: /(http:\/\/\S+)/.exec(line)?.[1] as string, log: () => log }
  } catch (err) {
    process.stderr.write(`${String(err)}\n`)
    return undefined
  }
}

const stop = (s: Serve | undefined, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> =>
  new Promise((resolve) => {
    const child = s?.child
    if (!child || child.exitCode !== null || child.signalCode !== null) return resolve()
    child.once('exit', () => resolve())
    child.kill(signal)
  })

/** One step; the whole answer when the client read a 200 to its end. */
function step(
  url: string,
  agent: string,
  mark: string,
  pad: number,
): Promise<{ status: number; ok: boolean }> {
  const body = JSON.stringify({
    model: MODEL,
    max_tokens: 16,
    messages: [{ role: 'user', content: `${mark} ${'x'.repeat(pad)}` }],
  })
  return new Promise((resolve) => {
    const req = http.request(`${url}/w/default/a/${agent}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', connection: 'close' },
    })
    req.on('response', (res) => {
      res.resume()
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, ok: res.statusCode === 200 && res.complete }),
      )
      res.on('error', () => resolve({ status: 0, ok: false }))
    })
    req.on('error', () => resolve({ status: 0, ok: false }))
    req.end(body)
  })
}

interface Tally {
  tries: number
  acked: number
  lost: number
  corrupted: number
  renumbered: number
  bricked: number
  notes: string[]
}
const tally = (): Tally => ({
  tries: 0,
  acked: 0,
  lost: 0,
  corrupted: 0,
  renumbered: 0,
  bricked: 0,
  notes: [],
})

/** The committed requests of each agent: number → request text. */
function branches(repo: string): Map<string, Map<string, string>> {
  const out = new Map<string, Map<string, string>>()
  for (const agent of AGENTS) {
    const steps = new Map<string, string>()
    let names: string[] = []
    try {
      names = sh('git', ['-C', repo, 'ls-tree', '--name-only', `agents/${agent}`, `steps/${agent}/`])
        .trim()
        .split('\n')
        .filter(Boolean)
    } catch {
      // no branch yet
    }
    for (const dir of names)
      steps.set(path.basename(dir), sh('git', ['-C', repo, 'show', `agents/${agent}:${dir}/request.json`]))
    out.set(agent, steps)
  }
  return out
}

/**
 * Count what the fault cost: an acknowledged mark no committed step holds is lost; a committed
 * request the provider never received is corrupted, unless its step is recorded as never sent
 * (`not_sent`) or cut while it went out (`interrupted`: SENT was journaled, the upload stopped with
 * the writer, so the provider never had it whole); an
 * agent's committed steps whose numbers do not follow the order the provider received them in,
 * or one request under two numbers, is renumbered; git fsck must be clean.
 */
function check(t: Tally, repo: string, acked: Set<string>, fake: FakeUpstream): void {
  const order = new Map(fake.received.map((r, i) => [r.body.toString(), i]))
  const committed: string[] = []
  for (const [agent, steps] of branches(repo)) {
    let last = -1
    const twice = new Set<string>()
    for (const [n, request] of [...steps].sort((a, b) => Number(a[0]) - Number(b[0]))) {
      committed.push(request)
      if (twice.has(request)) t.renumbered++
      twice.add(request)
      const at = order.get(request)
      if (at === undefined) {
        let meta = ''
        try {
          meta = sh('git', ['-C', repo, 'show', `agents/${agent}:steps/${agent}/${n}/meta.json`])
        } catch (err) {
          t.notes.push(`${agent}/${n}: ${String((err as { stderr?: Buffer }).stderr ?? err).trim()}`)
        }
        if (!/"outcome": "(not_sent|interrupted)"/.test(meta)) {
          t.corrupted++
          t.notes.push(
            `${agent}/${n}: committed, never received, recorded neither not_sent nor interrupted: ${request.slice(0, 120)}`,
          )
        }
        continue
      }
      if (at < last) t.renumbered++
      last = at
    }
  }
  for (const mark of acked) if (!committed.some((r) => r.includes(`"${mark} `))) t.lost++
  try {
    sh('git', ['-C', repo, 'fsck', '--strict', '--no-dangling', '--no-progress'])
  } catch (err) {
    t.corrupted++
    t.notes.push(
      `fsck: ${String((err as { stderr?: Buffer }).stderr ?? err)
        .trim()
        .slice(0, 200)}`,
    )
  }
}

function writeConfig(home: string, fake: FakeUpstream, fsync: boolean): void {
  fs.mkdirSync(home, { recursive: true })
  fs.writeFileSync(
    path.join(home, 'holdfast.yaml'),
    JSON.stringify({
      listen: { host: '127.0.0.1', port: 0 },
      defaults: { workspace: 'default', agent: 'main' },
      providers: { anthropic: { dialect: 'anthropic', base_url: fake.anthropicBaseUrl } },
      maintenance: { gc_every_steps: 0 },
      journal: { fsync },
    }),
    { mode: 0o600 },
  )
}

/** Steps over the agents until `until` says stop; returns the marks acknowledged. */
async function burst(
  url: string,
  label: string,
  count: number,
  pad: number,
  acked: Set<string>,
): Promise<number> {
  let refused = 0
  await Promise.all(
    AGENTS.map(async (agent) => {
      for (let i = 0; i < count; i++) {
        const mark = `${label} ${agent} ${i}`
        const r = await step(url, agent, mark, pad)
        if (r.ok) acked.add(mark)
        else refused++
      }
    }),
  )
  return refused
}

async function full(fake: FakeUpstream, tries: number): Promise<Tally> {
  const t = tally()
  const mnt = fs.mkdtempSync(path.join(os.tmpdir(), 'hf-full-'))
  sh('mount', ['-t', 'tmpfs', '-o', 'size=24m', 'tmpfs', mnt])
  try {
    for (let i = 0; i < tries; i++) {
      t.tries++
      fake.reset()
      const home = path.join(mnt, `home${i}`)
      writeConfig(home, fake, i % 2 === 1)
      const acked = new Set<string>()
      let s = await serve(home)
      if (!s) {
        t.bricked++
        continue
      }
      await burst(s.url, `t${i} before`, 3, 1000, acked)
      // Fill the disk to within ~200 KB, then a burst of 30 KB steps meets it.
      const filler = path.join(mnt, 'filler')
      try {
        sh('dd', ['if=/dev/zero', `of=${filler}`, 'bs=64k', 'count=100000'])
      } catch {
        // dd stops at the full disk: that is the point
      }
      const size = fs.statSync(filler).size
      fs.truncateSync(filler, Math.max(0, size - 200 * 1024))
      const refused = await burst(s.url, `t${i} full`, 6, 30 * 1024, acked)
      if (i % 2 === 0) {
        // A restart while the disk is full.
        await stop(s)
        s = await serve(home)
        if (!s) {
          t.bricked++
          t.notes.push(`try ${i}: serve did not start on the full disk`)
        }
      }
      fs.rmSync(filler)
      s ??= await serve(home)
      if (!s) {
        t.bricked++
        continue
      }
      await burst(s.url, `t${i} after`, 3, 1000, acked)
      await stop(s)
      s = await serve(home)
      if (!s) {
        t.bricked++
        continue
      }
      const last = await step(s.url, 'a1', `t${i} last`, 10)
      if (last.ok) acked.add(`t${i} last`)
      else t.bricked++
      await stop(s, 'SIGTERM')
      t.acked += acked.size
      t.notes.push(`try ${i}: ${refused} refused while full`)
      check(t, path.join(home, 'workspaces', 'default', 'repo.git'), acked, fake)
      fs.rmSync(home, { recursive: true, force: true })
    }
  } finally {
    quiet('umount', [mnt])
    fs.rmSync(mnt, { recursive: true, force: true })
  }
  return t
}

async function readonly(fake: FakeUpstream, tries: number): Promise<Tally> {
  const t = tally()
  for (let i = 0; i < tries; i++) {
    t.tries++
    fake.reset()
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'hf-ro-'))
    writeConfig(home, fake, false)
    const acked = new Set<string>()
    let s = await serve(home)
    if (!s) {
      t.bricked++
      continue
    }
    await burst(s.url, `t${i} before`, 3, 100, acked)
    await new Promise((r) => setTimeout(r, 500))
    const repo = path.join(home, 'workspaces', 'default', 'repo.git')
    sh('mount', ['--bind', repo, repo])
    // A file open for writing (a commit in flight) makes the remount busy: try again shortly.
    for (let k = 0; ; k++) {
      try {
        sh('mount', ['-o', 'remount,bind,ro', repo])
        break
      } catch (err) {
        if (k >= 50) throw err
        await new Promise((r) => setTimeout(r, 100))
      }
    }
    try {
      await burst(s.url, `t${i} ro`, 5, 100, acked)
      await stop(s)
      s = await serve(home) // a restart during the fault
      if (!s) t.bricked++
      else await burst(s.url, `t${i} ro2`, 2, 100, acked)
    } finally {
      sh('umount', [repo])
    }
    if (s) {
      const r = spawn(process.execPath, [CLI, 'recover', 'default', '--home', home], { stdio: 'ignore' })
      await new Promise((res) => r.once('exit', res))
      await new Promise((res) => setTimeout(res, 1000))
    }
    await stop(s, 'SIGTERM')
    t.acked += acked.size
    check(t, repo, acked, fake)
    fs.rmSync(home, { recursive: true, force: true })
  }
  return t
}

/** Hold back the page cache's writeback: what no fsync forced stays in memory until put back. */
function holdWriteback(): () => void {
  const keys = [
    'dirty_writeback_centisecs',
    'dirty_expire_centisecs',
    'dirty_ratio',
    'dirty_background_ratio',
  ]
  const saved = keys.map((k) => fs.readFileSync(`/proc/sys/vm/${k}`, 'utf8'))
  const set = (vals: string[]) =>
    keys.forEach((k, i) => fs.writeFileSync(`/proc/sys/vm/${k}`, vals[i] as string))
  set(['0', '360000', '90', '80'])
  return () => set(saved)
}

/**
 * A fresh 256 MB ext4 image under `dir`, mounted with `options`: where its copy after a cut goes,
 * the mount point, and the holdfast home on it.
 */
function ext4Disk(dir: string, options: string): { image: string; copy: string; mnt: string; home: string } {
  const image = path.join(dir, 'disk.img')
  const mnt = path.join(dir, 'mnt')
  fs.mkdirSync(mnt, { recursive: true })
  sh('truncate', ['-s', '256M', image])
  sh('mkfs.ext4', ['-q', '-F', image])
  sh('mount', ['-o', options, image, mnt])
  return { image, copy: path.join(dir, 'after-cut.img'), mnt, home: path.join(mnt, 'home') }
}

async function powercut(fake: FakeUpstream, tries: number, fsync: boolean): Promise<Tally> {
  const t = tally()
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hf-cut-'))
  for (let i = 0; i < tries; i++) {
    t.tries++
    fake.reset()
    const { image, copy, mnt, home } = ext4Disk(dir, 'loop,commit=600')
    const acked = new Set<string>()
    // The home as a machine has it before the session: its config on the disk.
    writeConfig(home, fake, fsync)
    sh('sync', [])
    const release = holdWriteback()
    try {
      const s = await serve(home)
      if (!s) {
        t.bricked++
        continue
      }
      // The cut comes mid-burst, after 6–18 acknowledged steps (or 20 s), at a random moment.
      const running = burst(s.url, `t${i}`, 40, 2000, acked)
      const want = 6 + Math.floor(Math.random() * 13)
      for (let waited = 0; acked.size < want && waited < 20_000; waited += 10)
        await new Promise((r) => setTimeout(r, 10))
      await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 50)))
      const before = new Set(acked)
      // A point in time: the writer stopped (what it had submitted lands), then the device copied.
      s.child.kill('SIGSTOP')
      await new Promise((r) => setTimeout(r, 200))
      fs.copyFileSync(image, copy) // what reached the device: the disk after the cut
      await stop(s)
      await running.catch(() => undefined)
      for (const m of acked) if (!before.has(m)) acked.delete(m) // acknowledged after the cut: not counted
    } finally {
      quiet('umount', [mnt])
      release()
    }
    // The machine comes back: the copy is the disk (ext4 replays its journal at mount).
    sh('mount', ['-o', 'loop', copy, mnt])
    try {
      const s = await serve(home)
      if (!s) {
        t.bricked++
        t.notes.push(`try ${i}: serve did not start after the cut`)
      } else {
        const r = await step(s.url, 'a1', `t${i} after`, 10)
        if (!r.ok) {
          t.bricked++
          t.notes.push(`try ${i}: the first step after the cut answered ${r.status}`)
        }
        await stop(s, 'SIGTERM')
        if (process.env.HOLDFAST_BENCH_VERBOSE) process.stderr.write(s.log())
        if (/moved back|set aside under/.test(s.log()))
          t.notes.push(
            `try ${i}: ${s
              .log()
              .split('\n')
              .filter((l) => /moved|aside/.test(l))
              .join(' | ')}`,
          )
      }
      t.acked += acked.size
      check(t, path.join(home, 'workspaces', 'default', 'repo.git'), acked, fake)
    } finally {
      quiet('umount', [mnt])
      if (process.env.HOLDFAST_BENCH_KEEP)
        fs.renameSync(copy, path.join(os.tmpdir(), `hf-cut-${process.pid}-${i}.img`))
      fs.rmSync(copy, { force: true })
      fs.rmSync(image, { force: true })
    }
  }
  fs.rmSync(dir, { recursive: true, force: true })
  return t
}

/**
 * The window a power cut costs without fsync, with the kernel's own writeback (not held back):
 * steps for `seconds`, a cut, and the age of the oldest acknowledged step that was lost.
 */
async function powercutWindow(fake: FakeUpstream, tries: number, seconds = 45): Promise<Tally> {
  const t = tally()
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hf-win-'))
  for (let i = 0; i < tries; i++) {
    t.tries++
    fake.reset()
    const { image, copy, mnt, home } = ext4Disk(dir, 'loop')
    writeConfig(home, fake, false)
    sh('sync', [])
    const ackedAt = new Map<string, number>()
    let cutAt = 0
    try {
      const s = await serve(home)
      if (!s) {
        t.bricked++
        continue
      }
      const until = Date.now() + seconds * 1000
      let k = 0
      while (Date.now() < until) {
        const mark = `w${i} a1 ${k++}`
        if ((await step(s.url, 'a1', mark, 2000)).ok) ackedAt.set(mark, Date.now())
        await new Promise((r) => setTimeout(r, 100))
      }
      s.child.kill('SIGSTOP')
      cutAt = Date.now()
      await new Promise((r) => setTimeout(r, 200))
      fs.copyFileSync(image, copy)
      await stop(s)
    } finally {
      quiet('umount', [mnt])
    }
    sh('mount', ['-o', 'loop', copy, mnt])
    try {
      const s = await serve(home)
      if (!s) t.bricked++
      else {
        if (!(await step(s.url, 'a1', `w${i} after`, 10)).ok) t.bricked++
        await stop(s, 'SIGTERM')
      }
      const before = t.lost
      check(t, path.join(home, 'workspaces', 'default', 'repo.git'), new Set(ackedAt.keys()), fake)
      t.acked += ackedAt.size
      const committed = [...branches(path.join(home, 'workspaces', 'default', 'repo.git')).values()].flatMap(
        (m) => [...m.values()],
      )
      const lostAges = [...ackedAt]
        .filter(([mark]) => !committed.some((r) => r.includes(`"${mark} `)))
        .map(([, at]) => cutAt - at)
      t.notes.push(
        `try ${i}: ${t.lost - before} of ${ackedAt.size} acknowledged lost; the oldest lost was acknowledged ${lostAges.length ? Math.round(Math.max(...lostAges) / 100) / 10 : 0} s before the cut`,
      )
    } finally {
      quiet('umount', [mnt])
      fs.rmSync(copy, { force: true })
      fs.rmSync(image, { force: true })
    }
  }
  fs.rmSync(dir, { recursive: true, force: true })
  return t
}

async function main(): Promise<void> {
  if (process.getuid?.() !== 0) {
    console.error('bench/faults.ts mounts file systems: run it as root')
    process.exit(2)
  }
  if (!fs.existsSync(CLI)) {
    console.error('run `npm run build` first')
    process.exit(2)
  }
  const which = process.argv[2] ?? 'all'
  const tries = Number(process.argv[3] ?? 10)
  const fake = await startFakeUpstream()
  const rows: [string, Tally][] = []
  const t0 = Date.now()
  if (which === 'all' || which === 'full') rows.push(['full disk (tmpfs)', await full(fake, tries)])
  if (which === 'all' || which === 'readonly') rows.push(['read-only repo', await readonly(fake, tries)])
  if (which === 'all' || which === 'powercut')
    rows.push(['power cut, fsync off', await powercut(fake, tries, false)])
  if (which === 'all' || which === 'powercut-fsync')
    rows.push(['power cut, fsync on', await powercut(fake, tries, true)])
  if (which === 'window')
    rows.push(["power cut, fsync off, the kernel's writeback", await powercutWindow(fake, tries)])
  console.log('| fault | tries | acknowledged | lost | corrupted | renumbered | bricked |')
  console.log('|---|---|---|---|---|---|---|')
  for (const [name, t] of rows)
    console.log(
      `| ${name} | ${t.tries} | ${t.acked} | ${t.lost} | ${t.corrupted} | ${t.renumbered} | ${t.bricked} |`,
    )
  for (const [name, t] of rows) for (const n of t.notes) console.error(`${name}: ${n}`)
  console.error(`${Math.round((Date.now() - t0) / 1000)} s`)
  await fake.close()
}

void main()
