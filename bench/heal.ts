/**
 * A power cut with `journal.fsync: false` and a remote, against the built `holdfast serve` (root:
 * it mounts ext4 on a loop device): `npm run build && node -r ./scripts/register.js bench/heal.ts
 * [tries]`. Per try: a home on a fresh image, its workspace's remote a bare repository on the
 * host's disk (outside the cut), the writeback held back; steps over three agents until the
 * remote holds some of each; then the device is copied at a stopped moment (the disk after the
 * cut: every local trace since the session began is gone, push.json and reflogs included), and
 * serve starts from it, takes one step per agent and pushes. Counts per agent: acknowledged steps
 * the remote held before the cut that are not on the local branch after (lost), a number on the
 * local branch whose request differs from the remote's under that number (renumbered), and a
 * remote ref the local branch does not contain (diverged). Prints one table line; asserts nothing;
 * docs/reliability.md has the figures.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import readline from 'node:readline'
import { startFakeUpstream, type FakeUpstream } from '../test/support/fake-upstream'

const CLI = path.join(__dirname, '..', 'dist', 'cli', 'entry.js')
const AGENTS = ['a1', 'a2', 'a3']
const MACHINE = 'cut-machine'

const sh = (cmd: string, args: string[]): string =>
  execFileSync(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 28 }).toString()
const quiet = (cmd: string, args: string[]): void => {
  try {
    sh(cmd, args)
  } catch {
    // a mount that is already gone
  }
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

async function serve(home: string): Promise<{ child: ChildProcess; url: string; log: () => string }> {
  const child = spawn(process.execPath, [CLI, 'serve', '--home', home, '--port', '0'], {
    env: { ...process.env, HOLDFAST_LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let log = ''
  child.stderr?.on('data', (d: Buffer) => (log += d.toString()))
  const line = await new Promise<string>((resolve, reject) => {
    readline.createInterface({ input: child.stdout as NodeJS.ReadableStream }).once('line', resolve)
    child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${log}`)))
  })
  return { child, url: /(http:\/\/\S+)/.exec(line)?.[1] as string, log: () => log }
}

const stop = (child: ChildProcess, signal: NodeJS.Signals): Promise<void> =>
  new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    child.once('exit', () => resolve())
    child.kill(signal)
  })

function step(url: string, agent: string, mark: string): Promise<boolean> {
  const body = JSON.stringify({
    model: 'claude-sonnet-4-5',
    max_tokens: 16,
    messages: [{ role: 'user', content: mark }],
  })
  return new Promise((resolve) => {
    const req = http.request(`${url}/w/default/a/${agent}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', connection: 'close' },
    })
    req.on('response', (res) => {
      res.resume()
      res.on('end', () => resolve(res.statusCode === 200 && res.complete))
      res.on('error', () => resolve(false))
    })
    req.on('error', () => resolve(false))
    req.end(body)
  })
}

/** Number → request of `rev`'s steps of `agent` in `repo` (none when the ref is absent). */
function stepsAt(repo: string, rev: string, agent: string): Map<string, string> {
  const out = new Map<string, string>()
  let names: string[]
  try {
    names = sh('git', ['-C', repo, 'ls-tree', '--name-only', rev, `steps/${agent}/`])
      .trim()
      .split('\n')
  } catch {
    return out
  }
  for (const dir of names.filter(Boolean))
    out.set(path.basename(dir), sh('git', ['-C', repo, 'show', `${rev}:${dir}/request.json`]))
  return out
}

const remoteRef = (agent: string) => `refs/holdfast/${MACHINE}/agents/${agent}`

interface Tally {
  tries: number
  pushedBeforeCut: number
  lost: number
  renumbered: number
  diverged: number
  notes: string[]
}

async function tryOnce(fake: FakeUpstream, dir: string, i: number, t: Tally): Promise<void> {
  const image = path.join(dir, 'disk.img')
  const copy = path.join(dir, 'after-cut.img')
  const mnt = path.join(dir, 'mnt')
  const bare = path.join(dir, `remote-${i}.git`) // on the host's disk: the cut does not reach it
  fs.mkdirSync(mnt, { recursive: true })
  sh('truncate', ['-s', '256M', image])
  sh('mkfs.ext4', ['-q', '-F', image])
  sh('mount', ['-o', 'loop,commit=600', image, mnt])
  sh('git', ['init', '--quiet', '--bare', bare])
  const home = path.join(mnt, 'home')
  fs.mkdirSync(home, { recursive: true })
  fs.writeFileSync(
    path.join(home, 'holdfast.yaml'),
    JSON.stringify({
      listen: { host: '127.0.0.1', port: 0 },
      machine: MACHINE,
      providers: { anthropic: { dialect: 'anthropic', base_url: fake.anthropicBaseUrl } },
      maintenance: { gc_every_steps: 0 },
      journal: { fsync: false },
      remote: { push_delay_ms: 50, fetch_interval_s: 0 },
    }),
    { mode: 0o600 },
  )
  // The workspace and its remote, on the disk before the session.
  let s = await serve(home)
  await step(s.url, 'setup', `t${i} setup`) // makes the workspace
  await stop(s.child, 'SIGTERM')
  sh('git', [
    '-C',
    path.join(home, 'workspaces', 'default', 'repo.git'),
    'remote',
    'add',
    'holdfast',
    `file://${bare}`,
  ])
  sh('sync', [])
  const keys = [
    'dirty_writeback_centisecs',
    'dirty_expire_centisecs',
    'dirty_ratio',
    'dirty_background_ratio',
  ]
  const saved = keys.map((k) => fs.readFileSync(`/proc/sys/vm/${k}`, 'utf8'))
  const set = (vals: string[]) =>
    keys.forEach((k, j) => fs.writeFileSync(`/proc/sys/vm/${k}`, vals[j] as string))
  set(['0', '360000', '90', '80'])
  try {
    s = await serve(home)
    const want = 6 + Math.floor(Math.random() * 10)
    let k = 0
    const pushedSteps = (): number => Math.min(...AGENTS.map((a) => stepsAt(bare, remoteRef(a), a).size))
    while (pushedSteps() < want && k < 200) {
      await Promise.all(AGENTS.map((a) => step(s.url, a, `t${i} ${a} ${k}`)))
      k++
    }
    await sleep(Math.floor(Math.random() * 300))
    s.child.kill('SIGSTOP')
    await sleep(200)
    fs.copyFileSync(image, copy)
    await stop(s.child, 'SIGKILL')
  } finally {
    quiet('umount', [mnt])
    set(saved)
  }
  const before = new Map(AGENTS.map((a) => [a, stepsAt(bare, remoteRef(a), a)]))
  for (const m of before.values()) t.pushedBeforeCut += m.size
  sh('mount', ['-o', 'loop', copy, mnt])
  try {
    s = await serve(home)
    for (const a of AGENTS) await step(s.url, a, `t${i} ${a} after`)
    await sleep(1500) // the pushes of the steps after the cut
    await stop(s.child, 'SIGTERM')
    const repo = path.join(home, 'workspaces', 'default', 'repo.git')
    for (const a of AGENTS) {
      const local = stepsAt(repo, `agents/${a}`, a)
      for (const [n, request] of before.get(a) ?? new Map<string, string>()) {
        if (!local.has(n)) t.lost++
        else if (local.get(n) !== request) t.renumbered++
      }
      try {
        sh('git', ['-C', bare, 'fetch', '--quiet', repo, `agents/${a}`])
        sh('git', ['-C', bare, 'merge-base', '--is-ancestor', remoteRef(a), 'FETCH_HEAD'])
      } catch {
        t.diverged++
        t.notes.push(`try ${i}: ${a}: the remote's ref is not in the local branch`)
      }
    }
    if (process.env.HOLDFAST_BENCH_VERBOSE) process.stderr.write(s.log())
  } finally {
    quiet('umount', [mnt])
    fs.rmSync(copy, { force: true })
    fs.rmSync(image, { force: true })
  }
}

async function main(): Promise<void> {
  if (process.getuid?.() !== 0) {
    console.error('bench/heal.ts mounts file systems: run it as root')
    process.exit(2)
  }
  if (!fs.existsSync(CLI)) {
    console.error('run `npm run build` first')
    process.exit(2)
  }
  const tries = Number(process.argv[2] ?? 5)
  const fake = await startFakeUpstream()
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hf-heal-'))
  const t: Tally = { tries: 0, pushedBeforeCut: 0, lost: 0, renumbered: 0, diverged: 0, notes: [] }
  for (let i = 0; i < tries; i++) {
    t.tries++
    fake.reset()
    await tryOnce(fake, dir, i, t)
  }
  console.log('| fault | tries | pushed before the cut | lost | renumbered | diverged |')
  console.log('|---|---|---|---|---|---|')
  console.log(
    `| power cut, fsync off, a remote | ${t.tries} | ${t.pushedBeforeCut} | ${t.lost} | ${t.renumbered} | ${t.diverged} |`,
  )
  for (const n of t.notes) console.error(n)
  fs.rmSync(dir, { recursive: true, force: true })
  await fake.close()
}

void main()
