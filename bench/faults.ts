/**
 * Disk faults against the built `holdfast serve`, on real file systems (root: it mounts them and
 * freezes processes in a cgroup): `npm run build && node -r ./scripts/register.js bench/faults.ts
 * [case] [tries]` (`HOLDFAST_BENCH_ROOT=<dir>` drives another checkout's build, as bench/procs).
 * Cases:
 * - `full`: a 24 MB tmpfs filled during a burst of 30 KB steps, then freed; restarts in between;
 * - `readonly`: the repository remounted read-only, a restart during it, `holdfast recover` after;
 * - `powercut`, `powercut-fsync`: ext4 on a loop device with writeback held back, cut mid-burst;
 * - `window`: fsync off with the kernel's own writeback: how old the oldest lost step was;
 * - `full-answer` (issue 41 S1): a 16 MB tmpfs filled to its last blocks, a streamed step whose
 *   ~31 KB answer the client reads whole, SIGTERM (one row) or kill -9 (another), the space freed,
 *   a start: is that answer committed?
 * - `powercut-remote` (issue 41 S2): fsync off, a remote holding steps 001–018 of each agent, a cut
 *   after which the disk holds 001–003, a start, 4 more steps and their push: are numbers given
 *   twice, and do the local branch and the remote's ref still descend one from the other?
 * - `all` (default): all but `window`.
 * The power cut (`cut`): ext4 on a loop device whose backing file is an ordinary file; every
 * process of the serve frozen at one instant (a freezer cgroup, its detached `git push` too), the
 * device left until it takes no more writes, its backing file copied while its write counter
 * stands still, then every process killed; the copy, mounted (ext4 replays its journal), is the
 * disk the next start finds. It is what had reached the device, in the order it got there, and
 * none of the page cache. It is not a disk's own volatile cache (every write the loop device took
 * is kept, in order, as if each were flushed), torn sectors, or a cut inside a system call (the
 * freezer lets a call under way finish); writeback is held back from the session's start (only
 * fsync, fdatasync and an explicit `sync -f` write), the harshest case for what fsync-off leaves
 * in memory. No device-mapper target (dm-flakey, dm-log-writes) is needed.
 * Each try checks, per agent: every acknowledged step (a 200 the client read whole) is committed
 * with the exact bytes the provider received (lost otherwise; `full-answer` also the answer's
 * bytes the client read); every committed request is one the provider received, or is recorded as
 * not sent or cut off around its send (corrupted otherwise); numbers are never given to two
 * different requests (renumbered: within a branch, and for `powercut-remote` between the local
 * branch and the remote's ref); the local branch and the remote's ref are one an ancestor of the
 * other (diverged otherwise); the workspace serves after the fault (bricked otherwise). Prints a
 * markdown table, one line per case (notes per try on stderr). Asserts nothing; docs/reliability.md
 * has figures.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import readline from 'node:readline'
import { startFakeUpstream, type FakeUpstream } from '../test/support/fake-upstream'
import { landed, ROOT, type Proc } from './procs'

/** The build driven: this checkout's `dist/`, or another's with `HOLDFAST_BENCH_ROOT=<dir>` (as bench/procs). */
const BUILD = process.env.HOLDFAST_BENCH_ROOT ?? ROOT
const CLI = path.join(BUILD, 'dist', 'cli', 'entry.js')
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

interface Serve extends Proc {
  log: () => string
}

/** Every serve started, killed when the bench exits however it exits (a failed try leaves none behind). */
const serves: ChildProcess[] = []
process.on('exit', () => {
  for (const c of serves) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
})

/**
 * `holdfast serve` on `home` (its holdfast.yaml already there), its log kept; with `group`, put in
 * that freezer cgroup before it starts anything (its children, a detached `git push` too, follow).
 */
async function serve(home: string, group?: Freezer): Promise<Serve | undefined> {
  const child = spawn(process.execPath, [CLI, 'serve', '--home', home, '--port', '0'], {
    env: { ...process.env, HOLDFAST_LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  serves.push(child)
  group?.add(child.pid as number)
  let log = ''
  child.stderr?.on('data', (d: Buffer) => (log += d.toString()))
  try {
    const line = await new Promise<string>((resolve, reject) => {
      readline.createInterface({ input: child.stdout as NodeJS.ReadableStream }).once('line', resolve)
      child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${log}`)))
    })
    let token: string | undefined
    try {
      token = fs.readFileSync(path.join(home, 'token'), 'utf8').trim()
    } catch {
      // a build from before the token
    }
    const url = /(http:\/\/\S+)/.exec(line)?.[1] as string
    return { child, url, pid: child.pid as number, token, log: () => log }
  } catch (err) {
    process.stderr.write(`${String(err)}\n`)
    return undefined
  }
}

/** `landed` (every numbered step committed, by health), or false after `ms`. */
const settled = (s: Serve, ms = 20_000): Promise<boolean> =>
  Promise.race([
    landed(s, 50).then(() => true),
    new Promise<boolean>((r) => setTimeout(() => r(false), ms)),
  ]).catch(() => false)

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
  /** Agents whose local branch and remote ref are not one an ancestor of the other (cases with a remote). */
  diverged?: number
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
function branches(
  repo: string,
  agents = AGENTS,
  refOf = (agent: string) => `agents/${agent}`,
): Map<string, Map<string, string>> {
  const out = new Map<string, Map<string, string>>()
  for (const agent of agents) {
    const steps = new Map<string, string>()
    let names: string[] = []
    try {
      names = sh('git', ['-C', repo, 'ls-tree', '--name-only', refOf(agent), `steps/${agent}/`])
        .trim()
        .split('\n')
        .filter(Boolean)
    } catch {
      // no branch yet
    }
    for (const dir of names)
      steps.set(path.basename(dir), sh('git', ['-C', repo, 'show', `${refOf(agent)}:${dir}/request.json`]))
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
function check(t: Tally, repo: string, acked: Set<string>, fake: FakeUpstream, agents = AGENTS): void {
  const order = new Map(fake.received.map((r, i) => [r.body.toString(), i]))
  const committed: string[] = []
  for (const [agent, steps] of branches(repo, agents)) {
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

function writeConfig(home: string, fake: FakeUpstream, fsync: boolean, extra: object = {}): void {
  fs.mkdirSync(home, { recursive: true })
  fs.writeFileSync(
    path.join(home, 'holdfast.yaml'),
    JSON.stringify({
      listen: { host: '127.0.0.1', port: 0 },
      defaults: { workspace: 'default', agent: 'main' },
      providers: { anthropic: { dialect: 'anthropic', base_url: fake.anthropicBaseUrl } },
      maintenance: { gc_every_steps: 0 },
      journal: { fsync },
      ...extra,
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
  const group = freezer()
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
      const s = await serve(home, group)
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
      await cut(s, group, image, copy, t, `try ${i}`)
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
  group?.remove()
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

/** One streamed step; the answer's bytes when the client read a 200 event stream to its `message_stop`. */
function streamed(url: string, agent: string, mark: string): Promise<{ status: number; answer?: Buffer }> {
  const body = JSON.stringify({
    model: MODEL,
    max_tokens: 16,
    stream: true,
    messages: [{ role: 'user', content: `${mark} ${'x'.repeat(200)}` }],
  })
  return new Promise((resolve) => {
    const req = http.request(`${url}/w/default/a/${agent}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', connection: 'close' },
    })
    req.on('response', (res) => {
      const parts: Buffer[] = []
      res.on('data', (d: Buffer) => parts.push(d))
      res.on('end', () => {
        const answer = Buffer.concat(parts)
        const whole = res.statusCode === 200 && res.complete && answer.includes('event: message_stop')
        resolve({ status: res.statusCode ?? 0, answer: whole ? answer : undefined })
      })
      res.on('error', () => resolve({ status: 0 }))
    })
    req.on('error', () => resolve({ status: 0 }))
    req.end(body)
  })
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

/** Unmount `dir`, lazily when it is still busy: no mount outlives the bench. */
function unmount(dir: string): void {
  try {
    sh('umount', [dir])
  } catch {
    quiet('umount', ['-l', dir])
  }
}

/** Fill the file system of `dir` with a filler file to its last block, then give `slackKb` KB back. */
function fill(dir: string, slackKb: number): string {
  const filler = path.join(dir, 'filler')
  try {
    sh('dd', ['if=/dev/zero', `of=${filler}`, 'bs=64k', 'count=100000'])
  } catch {
    // dd stops at the full disk: that is the point
  }
  fs.truncateSync(filler, Math.max(0, fs.statSync(filler).size - slackKb * 1024))
  return filler
}

/** S1's answer under the fault: about 31 KB of events, more than the room left. */
const BIG_ANSWER = Array.from({ length: 140 }, (_, k) => `w${k}-${'y'.repeat(96)}`).join(' ')

/** What the log said at the stop: its warnings and errors, messages only. */
const warnings = (log: string): string[] =>
  log.split('\n').flatMap((l) => {
    try {
      const e = JSON.parse(l) as { level?: number; msg?: string }
      return (e.level ?? 0) >= 40 && e.msg ? [e.msg] : []
    } catch {
      return []
    }
  })

/**
 * S1's rule: every answer a client read whole is committed with its step, byte for byte (lost when
 * no step holds its request, or the step is `interrupted` or has no response file; corrupted when
 * the response file holds other bytes). Returns what the step of `watch` was recorded as.
 */
function keptAnswers(
  t: Tally,
  repo: string,
  agent: string,
  answers: Map<string, Buffer>,
  watch: string,
): string {
  const steps = branches(repo, [agent]).get(agent) ?? new Map<string, string>()
  let said = 'not committed'
  for (const [mark, answer] of answers) {
    const n = [...steps].find(([, request]) => request.includes(`"${mark} `))?.[0]
    if (n === undefined) {
      t.lost++
      t.notes.push(`${mark}: answered whole, and no step holds its request`)
      continue
    }
    const dir = `agents/${agent}:steps/${agent}/${n}`
    const meta = JSON.parse(sh('git', ['-C', repo, 'show', `${dir}/meta.json`])) as {
      outcome?: string
      response_file?: string | null
    }
    const kept = meta.response_file
      ? execFileSync('git', ['-C', repo, 'show', `${dir}/${meta.response_file}`], { maxBuffer: 1 << 28 })
      : undefined
    if (mark === watch)
      said = `${n} ${meta.outcome}, response_file ${meta.response_file}${kept ? ` (${kept.length} of the ${answer.length} bytes the client read)` : ''}`
    if (meta.outcome === 'interrupted' || !kept) {
      t.lost++
      continue
    }
    if (!kept.equals(answer)) {
      t.corrupted++
      t.notes.push(
        `${agent}/${n}: its ${meta.response_file} (${kept.length} bytes) is not the ${answer.length} bytes the client read`,
      )
    }
  }
  return said
}

/**
 * S1 (issue 41): a full disk during an answer, then a stop before space returns. Per try: a home
 * on a fresh 16 MB tmpfs, 3 streamed steps (committed), the disk filled to its last block less
 * `HOLDFAST_BENCH_SLACK_KB` (default 8: room for the request's journal frames, not for the
 * answer's), one streamed step whose ~31 KB answer the client reads whole, `signal`, the space
 * freed, a start, one more step. Counts, over every answer the client read whole, those the
 * branch does not keep byte for byte (`steps/a/004/meta.json` `interrupted` or `response_file:
 * null` is the failure the issue measured).
 */
async function fullAnswer(fake: FakeUpstream, tries: number, signal: 'SIGTERM' | 'SIGKILL'): Promise<Tally> {
  const t = tally()
  const agent = 'a'
  const slack = Number(process.env.HOLDFAST_BENCH_SLACK_KB ?? 8)
  for (let i = 0; i < tries; i++) {
    t.tries++
    fake.reset()
    const mnt = fs.mkdtempSync(path.join(os.tmpdir(), 'hf-s1-'))
    sh('mount', ['-t', 'tmpfs', '-o', 'size=16m', 'tmpfs', mnt])
    let s: Serve | undefined
    try {
      const home = path.join(mnt, 'home')
      writeConfig(home, fake, false)
      const answers = new Map<string, Buffer>()
      const ask = async (mark: string): Promise<boolean> => {
        const r = await streamed((s as Serve).url, agent, mark)
        if (r.answer) answers.set(mark, r.answer)
        return r.answer !== undefined
      }
      s = await serve(home)
      if (!s) {
        t.bricked++
        continue
      }
      for (let k = 1; k <= 3; k++) await ask(`t${i} s${k}`)
      if (!(await settled(s))) t.notes.push(`try ${i}: steps 001–003 not committed before the fill`)
      const filler = fill(mnt, slack)
      fake.enqueue({ text: BIG_ANSWER })
      const watch = `t${i} s4`
      const whole = await ask(watch)
      await sleep(500) // the commit tries, and fails for want of room
      const from = s.log().length
      await stop(s, signal)
      const said = warnings(s.log().slice(from))
      fs.rmSync(filler)
      s = await serve(home)
      if (!s) {
        t.bricked++
        t.notes.push(`try ${i}: serve did not start once the space was back`)
        continue
      }
      if (!(await settled(s)))
        t.notes.push(`try ${i}: the journal's steps not committed 20 s after the start`)
      if (!(await ask(`t${i} s5`))) {
        t.bricked++
        t.notes.push(`try ${i}: the step after the restart was not answered whole`)
      }
      await settled(s)
      await stop(s, 'SIGTERM')
      t.acked += answers.size
      const repo = path.join(home, 'workspaces', 'default', 'repo.git')
      check(t, repo, new Set(), fake, [agent])
      const recorded = keptAnswers(t, repo, agent, answers, watch)
      t.notes.push(
        `try ${i}: step 4 ${whole ? `answered whole (${answers.get(watch)?.length} bytes)` : 'not answered whole'}, ${signal}; recorded: ${recorded}; the stop's log: ${said.join(' | ').slice(0, 400) || '(no warning)'}`,
      )
    } finally {
      await stop(s)
      unmount(mnt)
      fs.rmSync(mnt, { recursive: true, force: true })
    }
  }
  return t
}

/**
 * A freezer cgroup (v1's `freezer`, else v2's `cgroup.freeze`): every process in it stopped at one
 * instant, the children serve started (a `git push` in a session of its own) with it.
 */
interface Freezer {
  add(pid: number): void
  /** Resolves once every process in it is frozen (false after 10 s). */
  freeze(): Promise<boolean>
  /** SIGKILL every process in it, then thaw it so the signal lands. */
  killAll(): void
  remove(): void
}

function freezer(): Freezer | undefined {
  const v1 = '/sys/fs/cgroup/freezer'
  const v2 = ['/sys/fs/cgroup', '/sys/fs/cgroup/unified'].find((d) =>
    fs.existsSync(path.join(d, 'cgroup.subtree_control')),
  )
  const root = fs.existsSync(path.join(v1, 'cgroup.procs')) ? v1 : v2
  if (root === undefined) return undefined
  const dir = path.join(root, `holdfast-bench-${process.pid}`)
  try {
    fs.mkdirSync(dir, { recursive: true })
  } catch {
    return undefined
  }
  const file = (name: string) => path.join(dir, name)
  const set = (frozen: boolean) =>
    root === v1
      ? fs.writeFileSync(file('freezer.state'), frozen ? 'FROZEN' : 'THAWED')
      : fs.writeFileSync(file('cgroup.freeze'), frozen ? '1' : '0')
  const frozen = () =>
    root === v1
      ? fs.readFileSync(file('freezer.state'), 'utf8').trim() === 'FROZEN'
      : /^frozen 1$/m.test(fs.readFileSync(file('cgroup.events'), 'utf8'))
  const pids = () => fs.readFileSync(file('cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number)
  // After the serves' own exit handler has sent SIGKILL: thawed, they take it.
  process.on('exit', () => {
    try {
      set(false)
    } catch {
      // removed already
    }
  })
  return {
    add: (pid) => fs.writeFileSync(file('cgroup.procs'), String(pid)),
    freeze: async () => {
      set(true)
      for (let k = 0; k < 200; k++) {
        if (frozen()) return true
        await sleep(50)
      }
      return false
    },
    killAll: () => {
      for (const pid of pids())
        try {
          process.kill(pid, 'SIGKILL')
        } catch {
          // gone already
        }
      set(false)
    },
    remove: () => {
      for (let k = 0; k < 50 && pids().length > 0; k++) execFileSync('sleep', ['0.1'])
      quiet('rmdir', [dir])
    },
  }
}

/** The loop device backing `image`: its writes completed and in flight (`/sys/block/<dev>/stat`). */
function deviceWrites(image: string): string {
  const dev = path.basename(sh('losetup', ['-j', image]).split(':')[0] as string)
  const f = fs.readFileSync(`/sys/block/${dev}/stat`, 'utf8').trim().split(/\s+/)
  return `${f[4]} ${f[8]}`
}

/**
 * The power cut. Every process of the serve is frozen at one instant (`group`; without one, serve
 * alone is stopped); the loop device is left until it takes no more writes (what the kernel had
 * submitted lands, as a disk finishes a write under way); its backing file is copied, again until
 * the device's write counter did not move during the copy; then every process is killed. The copy
 * is the disk after the cut: what reached the device, in the order it got there; the page cache
 * (dirty pages, unwritten metadata) is what the cut takes.
 */
async function cut(
  s: Serve,
  group: Freezer | undefined,
  image: string,
  copy: string,
  t: Tally,
  label: string,
): Promise<void> {
  if (!group) s.child.kill('SIGSTOP')
  else if (!(await group.freeze())) t.notes.push(`${label}: the freezer did not freeze within 10 s`)
  try {
    let seen = deviceWrites(image)
    for (let k = 0; k < 50; k++) {
      await sleep(200)
      const now = deviceWrites(image)
      if (now === seen && now.endsWith(' 0')) break
      seen = now
    }
    for (let k = 0; ; k++) {
      const before = deviceWrites(image)
      sh('cp', ['--sparse=always', image, copy])
      if (deviceWrites(image) === before) break
      if (k >= 4) {
        t.notes.push(`${label}: the device took writes during each of 5 copies; the last one is used`)
        break
      }
    }
  } finally {
    // A frozen process takes SIGKILL only once thawed: killAll does both.
    if (group) group.killAll()
  }
  await stop(s)
}

/** This bench's machine name on the remote (`machine:`). */
const MACHINE = 'bench'

/** The remote's ref of `agent` and its commit (either form: refs/holdfast/… or refs/heads/holdfast/…), with any other ref naming the agent. */
function remoteRefs(bare: string, agent: string): { main?: string; others: string[] } {
  const lines = sh('git', ['-C', bare, 'for-each-ref', '--format=%(refname)'])
    .split('\n')
    .filter((r) => r.endsWith(`/agents/${agent}`) || r.includes(`/agents/${agent}/`))
  const main = [
    `refs/holdfast/${MACHINE}/agents/${agent}`,
    `refs/heads/holdfast/${MACHINE}/agents/${agent}`,
  ].find((r) => lines.includes(r))
  return { main, others: lines.filter((r) => r !== main) }
}

/** The highest step number under `ref`'s `steps/<agent>/` in `repo`, 0 when none. */
function highest(repo: string, ref: string, agent: string): number {
  try {
    const names = sh('git', ['-C', repo, 'ls-tree', '--name-only', ref, `steps/${agent}/`])
      .trim()
      .split('\n')
    return Math.max(0, ...names.filter(Boolean).map((n) => Number(path.basename(n))))
  } catch {
    return 0
  }
}

/** Until the remote holds step `n` of every agent (false after `ms`). */
async function onRemote(bare: string, n: number, ms = 30_000): Promise<boolean> {
  for (const until = Date.now() + ms; Date.now() < until; await sleep(100))
    if (
      AGENTS.every((a) => {
        const ref = remoteRefs(bare, a).main
        return ref !== undefined && highest(bare, ref, a) >= n
      })
    )
      return true
  return false
}

const tipOf = (repo: string, ref: string): string | undefined => {
  try {
    return sh('git', ['-C', repo, 'rev-parse', '--verify', '-q', ref]).trim()
  } catch {
    return undefined
  }
}

/** Until every agent's remote ref is its local branch's tip (false after `ms`). */
async function pushedAll(repo: string, bare: string, ms: number): Promise<boolean> {
  for (const until = Date.now() + ms; Date.now() < until; await sleep(200))
    if (
      AGENTS.every((a) => {
        const ref = remoteRefs(bare, a).main
        return ref !== undefined && tipOf(bare, ref) === tipOf(repo, `refs/heads/agents/${a}`)
      })
    )
      return true
  return false
}

/**
 * S2's counts, local branch against the remote's ref, per agent (in a scratch repository both are
 * fetched into): renumbered, each step number both hold with another `request.json`; diverged,
 * each agent whose two tips are not one an ancestor of the other.
 */
function compareRemote(t: Tally, repo: string, bare: string, label: string): void {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'hf-cmp-'))
  try {
    sh('git', ['init', '--bare', '-q', scratch])
    sh('git', ['-C', scratch, 'fetch', '-q', repo, 'refs/heads/agents/*:refs/local/*'])
    sh('git', ['-C', scratch, 'fetch', '-q', bare, 'refs/*:refs/remote/*'])
    for (const agent of AGENTS) {
      const { main, others } = remoteRefs(bare, agent)
      if (others.length) t.notes.push(`${label} ${agent}: the remote also has ${others.join(', ')}`)
      const local = `refs/local/${agent}`
      if (main === undefined || tipOf(scratch, local) === undefined) {
        t.notes.push(`${label} ${agent}: ${main === undefined ? 'no ref on the remote' : 'no local branch'}`)
        continue
      }
      const remote = main.replace(/^refs\//, 'refs/remote/')
      const blobs = (ref: string) =>
        new Map(
          sh('git', ['-C', scratch, 'ls-tree', '-r', ref, `steps/${agent}/`])
            .split('\n')
            .filter((l) => l.endsWith('/request.json'))
            .map((l) => {
              const [meta, file] = l.split('\t') as [string, string]
              return [file, meta.split(' ')[2] as string]
            }),
        )
      const mine = blobs(local)
      const twice: string[] = []
      for (const [file, blob] of blobs(remote))
        if (mine.has(file) && mine.get(file) !== blob) twice.push(path.basename(path.dirname(file)))
      t.renumbered += twice.length
      const ancestor = (a: string, b: string) => {
        try {
          sh('git', ['-C', scratch, 'merge-base', '--is-ancestor', a, b])
          return true
        } catch {
          return false
        }
      }
      const apart = !ancestor(local, remote) && !ancestor(remote, local)
      if (apart) (t.diverged as number)++
      t.notes.push(
        `${label} ${agent}: local up to ${highest(scratch, local, agent)}, remote up to ${highest(scratch, remote, agent)}${twice.length ? `, numbers given twice: ${twice[0]}–${twice[twice.length - 1]}` : ''}${apart ? ', diverged' : ''}`,
      )
    }
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true })
  }
}

/**
 * S2 (issue 41): a power cut with `journal.fsync: false` (the default) and a remote. Per try: ext4
 * on a loop device (writeback held back, as `powercut`), a bare repository outside it as the
 * workspace's remote `holdfast` (`holdfast remote set`, docs/remote.md); steps 001–003 of each of 3
 * agents pushed, then the file system synced (what the kernel's own writeback would have written
 * by then), steps 004–018 pushed (the remote's refs say 018), the cut (`cut`), a start on the
 * copy, 4 more steps each, their push. Counts lost (acknowledged steps the local branch lacks at
 * the end, the remote holding them or not), renumbered and diverged (`compareRemote`).
 */
async function powercutRemote(fake: FakeUpstream, tries: number): Promise<Tally> {
  const t = { ...tally(), diverged: 0 }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hf-s2-'))
  const group = freezer()
  if (!group)
    t.notes.push('no freezer cgroup here: the cut stops serve alone (SIGSTOP), not a git it started')
  try {
    for (let i = 0; i < tries; i++) {
      t.tries++
      fake.reset()
      const { image, copy, mnt, home } = ext4Disk(dir, 'loop,commit=600')
      const bare = path.join(dir, 'remote.git')
      const repo = path.join(home, 'workspaces', 'default', 'repo.git')
      fs.rmSync(bare, { recursive: true, force: true })
      sh('git', ['init', '--bare', '-q', bare])
      writeConfig(home, fake, false, {
        machine: MACHINE,
        remote: { push_delay_ms: 100, retry_min_ms: 200, retry_max_ms: 2000 },
      })
      sh('sync', ['-f', mnt])
      const acked = new Set<string>()
      const release = holdWriteback()
      let s: Serve | undefined
      let cutDone = false
      try {
        s = await serve(home, group)
        if (s) {
          await burst(s.url, `t${i} first`, 1, 100, acked) // 001: the workspace is made
          execFileSync(process.execPath, [CLI, 'remote', 'set', 'default', bare, '--home', home], {
            stdio: 'ignore',
          })
          await burst(s.url, `t${i} early`, 2, 100, acked)
          if (!(await onRemote(bare, 3))) t.notes.push(`try ${i}: 003 not on the remote after 30 s`)
          sh('sync', ['-f', mnt])
          await burst(s.url, `t${i} late`, 15, 2000, acked)
          if (!(await onRemote(bare, 18))) t.notes.push(`try ${i}: 018 not on the remote after 30 s`)
          await cut(s, group, image, copy, t, `try ${i}`)
          cutDone = true
        }
      } finally {
        await stop(s)
        unmount(mnt)
        release()
      }
      if (!cutDone) {
        t.bricked++
        fs.rmSync(image, { force: true })
        continue
      }
      sh('mount', ['-o', 'loop', copy, mnt])
      try {
        s = await serve(home)
        if (!s) {
          t.bricked++
          t.notes.push(`try ${i}: serve did not start after the cut`)
        } else {
          const next = new Set<string>()
          await burst(s.url, `t${i} next`, 4, 100, next)
          if (next.size < 4 * AGENTS.length) t.bricked++
          for (const m of next) acked.add(m)
          await settled(s)
          const pushed = await pushedAll(repo, bare, 10_000)
          await stop(s, 'SIGTERM')
          const said = warnings(s.log()).filter((m) => /remote|push|lost|moved back|reserved/.test(m))
          t.notes.push(
            `try ${i}: after the cut, ${pushed ? 'every branch pushed' : 'not every branch pushed in 10 s'}; the log: ${said.join(' | ').slice(0, 600) || '(nothing on the remote)'}`,
          )
        }
        t.acked += acked.size
        check(t, repo, acked, fake)
        const local = [...branches(repo).values()].flatMap((m) => [...m.values()])
        const remote = [
          ...branches(bare, AGENTS, (a) => remoteRefs(bare, a).main ?? 'refs/none').values(),
        ].flatMap((m) => [...m.values()])
        const has = (requests: string[], mark: string) => requests.some((r) => r.includes(`"${mark} `))
        const missing = [...acked].filter((m) => !has(local, m))
        if (missing.length)
          t.notes.push(
            `try ${i}: ${missing.length} acknowledged steps missing from the local branches, ${missing.filter((m) => has(remote, m)).length} of them on the remote`,
          )
        compareRemote(t, repo, bare, `try ${i}`)
      } finally {
        unmount(mnt)
        fs.rmSync(copy, { force: true })
        fs.rmSync(image, { force: true })
        fs.rmSync(bare, { recursive: true, force: true })
      }
    }
  } finally {
    group?.remove()
    fs.rmSync(dir, { recursive: true, force: true })
  }
  return t
}

const CASES = [
  'full',
  'readonly',
  'powercut',
  'powercut-fsync',
  'window',
  'full-answer',
  'powercut-remote',
  'all',
]

async function main(): Promise<void> {
  const which = process.argv[2] ?? 'all'
  const tries = Number(process.argv[3] ?? 10)
  if (!CASES.includes(which) || !Number.isInteger(tries) || tries < 1) {
    console.error(`usage: bench/faults.ts [${CASES.join('|')}] [tries]`)
    process.exit(2)
  }
  if (process.getuid?.() !== 0) {
    console.error(
      'bench/faults.ts mounts file systems (tmpfs, ext4 on a loop device) and freezes processes in a cgroup: run it as root',
    )
    process.exit(2)
  }
  if (!fs.existsSync(CLI)) {
    console.error(`${CLI} is missing: run \`npm run build\` in ${BUILD} first`)
    process.exit(2)
  }
  const fake = await startFakeUpstream()
  const rows: [string, Tally][] = []
  const t0 = Date.now()
  const run = (name: string) => which === name || (which === 'all' && name !== 'window')
  if (run('full')) rows.push(['full disk (tmpfs)', await full(fake, tries)])
  if (run('readonly')) rows.push(['read-only repo', await readonly(fake, tries)])
  if (run('powercut')) rows.push(['power cut, fsync off', await powercut(fake, tries, false)])
  if (run('powercut-fsync')) rows.push(['power cut, fsync on', await powercut(fake, tries, true)])
  if (run('window'))
    rows.push(["power cut, fsync off, the kernel's writeback", await powercutWindow(fake, tries)])
  if (run('full-answer')) {
    rows.push(['S1: disk full during an answer, then SIGTERM', await fullAnswer(fake, tries, 'SIGTERM')])
    rows.push(['S1: disk full during an answer, then kill -9', await fullAnswer(fake, tries, 'SIGKILL')])
  }
  if (run('powercut-remote'))
    rows.push(['S2: power cut, fsync off, with a remote', await powercutRemote(fake, tries)])
  const commit = (() => {
    try {
      return sh('git', ['-C', BUILD, 'describe', '--always', '--dirty']).trim()
    } catch {
      return 'unknown'
    }
  })()
  console.log(`build ${BUILD} at ${commit}, ${new Date().toISOString().slice(0, 16).replace('T', ' ')}`)
  console.log('| fault | tries | acknowledged | lost | corrupted | renumbered | diverged | bricked |')
  console.log('|---|---|---|---|---|---|---|---|')
  for (const [name, t] of rows)
    console.log(
      `| ${name} | ${t.tries} | ${t.acked} | ${t.lost} | ${t.corrupted} | ${t.renumbered} | ${t.diverged ?? '–'} | ${t.bricked} |`,
    )
  for (const [name, t] of rows) for (const n of t.notes) console.error(`${name}: ${n}`)
  console.error(`${Math.round((Date.now() - t0) / 1000)} s`)
  await fake.close()
}

void main()
