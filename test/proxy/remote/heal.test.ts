/**
 * proxy/remote/heal.ts, against a real `git daemon` on loopback: a power cut that takes this
 * machine's commits after they were pushed (simulated by putting back the repository as it was at
 * step 003: refs, reflogs and packs, the way a cut with `journal.fsync: false` leaves them) is
 * healed at the next start by fetching the remote's copies back and fast-forwarding; when
 * nothing local knew, and new steps took the lost numbers, both histories are kept and said.
 */
import fs from 'node:fs'
import path from 'node:path'
import { Writable } from 'node:stream'
import pino from 'pino'
import { cli, eventually, git, startProxy, type Proxy } from '../../support/harness'
import { bareRepo, gitIn, type GitServer, startGitDaemon, tempDir } from '../../support/git-servers'
import { postAnthropic } from '../../support/raw-http'
import { readPushState } from '../../../proxy/remote/state'
import { Workspace } from '../../../proxy/store/workspace'

const REMOTE_CONFIG = {
  machine: 'laptop-a',
  remote: { push_delay_ms: 20, retry_min_ms: 100, retry_max_ms: 400, fetch_interval_s: 0, timeout_s: 30 },
}
const MAIN = 'refs/holdfast/laptop-a/agents/main'
const SIDE = 'refs/holdfast/laptop-a/diverged/main/after-003'

let base: string
let server: GitServer
let p: Proxy
let bare: string
const lines: Record<string, unknown>[] = []
const log = pino(
  { level: 'info' },
  new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n'))
        if (l) lines.push(JSON.parse(l) as Record<string, unknown>)
      done()
    },
  }),
)

const step = async (content: string): Promise<void> => {
  const r = await postAnthropic(
    p.url,
    '/w/default/a/main/v1/messages',
    JSON.stringify({ model: 'claude-fake-1', max_tokens: 8, messages: [{ role: 'user', content }] }),
  )
  expect(r.status).toBe(200)
}
const remoteRef = (ref: string): string | undefined =>
  gitIn(bare, 'for-each-ref', '--format=%(objectname)', ref).trim() || undefined
const localTip = (): string => git(p.repo(), 'rev-parse', 'agents/main').trim()
const steps = (rev: string, repo = p.repo()): string[] =>
  git(repo, 'ls-tree', '--name-only', rev, 'steps/main/')
    .trim()
    .split('\n')
    .map((s) => path.basename(s))
const numbered = (from: number, to: number): string[] =>
  Array.from({ length: to - from + 1 }, (_, i) => String(from + i).padStart(3, '0'))

const wsDir = (): string => path.join(p.home, 'workspaces', 'default')
const pushJson = (): string => path.join(wsDir(), 'remote', 'push.json')

/** Steps 001–003, the workspace as a cut will leave it copied aside, then 004–018, all pushed. */
async function pushedUpTo18(): Promise<string> {
  await new Workspace(p.home, 'default').ensure()
  git(p.repo(), 'remote', 'add', 'holdfast', server.url('team.git'))
  for (let i = 1; i <= 3; i++) await step(`s${i}`)
  await p.settled()
  await eventually(() => readPushState(p.home, 'default')?.agents.main?.step === 3, 20_000, 'pushed 003')
  await p.stop()
  const aside = path.join(base, 'at-003')
  fs.cpSync(wsDir(), aside, { recursive: true })
  await p.restart()
  for (let i = 4; i <= 18; i++) await step(`s${i}`)
  await p.settled()
  await eventually(() => readPushState(p.home, 'default')?.agents.main?.step === 18, 20_000, 'pushed 018')
  expect(remoteRef(MAIN)).toBe(localTip())
  await p.stop()
  return aside
}

/**
 * The power cut: the workspace (the repository's refs, reflogs and packs, the journal, and
 * push.json unless it `survived`) back as it was at step 003.
 */
function cut(at: string, survived: boolean): void {
  const kept = fs.readFileSync(pushJson())
  fs.rmSync(wsDir(), { recursive: true, force: true })
  fs.cpSync(at, wsDir(), { recursive: true })
  if (survived) fs.writeFileSync(pushJson(), kept)
}

beforeEach(async () => {
  base = tempDir()
  server = await startGitDaemon(base)
  bare = bareRepo(base, 'team.git')
  lines.length = 0
  p = await startProxy({ config: REMOTE_CONFIG, log })
})
afterEach(async () => {
  await p.close()
  await server.stop()
  fs.rmSync(base, { recursive: true, force: true })
})

test('a branch a cut rewound below what was pushed is fast-forwarded from the remote at the next start, and numbering goes on after it', async () => {
  const at = await pushedUpTo18()
  const pushedTip = remoteRef(MAIN) as string
  cut(at, true) // push.json survived: it says 018 was pushed
  expect(steps('agents/main')).toEqual(numbered(1, 3))
  await p.restart()
  expect(localTip()).toBe(pushedTip) // before any step: the remote's own copies, byte-exact
  expect(steps('agents/main')).toEqual(numbered(1, 18))
  await step('s19')
  await p.settled()
  expect(steps('agents/main')).toEqual(numbered(1, 19))
  await eventually(() => remoteRef(MAIN) === localTip(), 20_000, 'step 019 pushed')
  await eventually(() => readPushState(p.home, 'default')?.agents.main?.step === 19, 10_000, 'state written')
  const state = readPushState(p.home, 'default')
  expect(state?.refused).toEqual({})
  expect(state?.diverged).toEqual({})
  expect(state?.healed?.main).toMatchObject({ from_step: 3, to_step: 18, commit: pushedTip })
  // no number lost, so none reserved; the reflog says what moved the branch
  expect(fs.existsSync(path.join(p.home, 'quarantine', 'default', 'main'))).toBe(false)
  expect(git(p.repo(), 'reflog', 'agents/main')).toMatch(/holdfast heal: step 018/)
  expect(lines.map((l) => String(l.msg))).toContainEqual(
    expect.stringMatching(/main: fetched back steps 004–018 from holdfast/),
  )
  const shown = cli(['remote', 'show', 'default', '--home', p.home])
  expect(shown.stdout).toMatch(/main: fetched back steps 004–018 from the remote/)
})

test('a cut that took every local trace of what was pushed (push.json too), a whole branch included, is healed all the same: the start asks the remote', async () => {
  const at = await pushedUpTo18()
  // An agent whose every step came after the moment the cut goes back to.
  await p.restart()
  const late = (
    await postAnthropic(
      p.url,
      '/w/default/a/late/v1/messages',
      JSON.stringify({ model: 'claude-fake-1', max_tokens: 8, messages: [{ role: 'user', content: 'l1' }] }),
    )
  ).status
  expect(late).toBe(200)
  await p.settled()
  const lateRef = 'refs/holdfast/laptop-a/agents/late'
  await eventually(() => remoteRef(lateRef) !== undefined, 20_000, 'late pushed')
  await p.stop()
  const theirs = remoteRef(MAIN) as string
  cut(at, false) // push.json says 003, the reflog 003, the journal nothing, no branch late
  expect(() => git(p.repo(), 'rev-parse', '--verify', 'agents/late')).toThrow()
  await p.restart()
  expect(localTip()).toBe(theirs)
  expect(git(p.repo(), 'rev-parse', 'agents/late').trim()).toBe(remoteRef(lateRef))
  expect(lines.map((l) => String(l.msg))).toContainEqual(
    expect.stringMatching(/late: fetched back steps 001–001 from holdfast/),
  )
  await step('s19')
  await p.settled()
  expect(steps('agents/main')).toEqual(numbered(1, 19))
  await eventually(() => remoteRef(MAIN) === localTip(), 20_000, 'step 019 pushed')
})

test('histories that diverged anyway are both kept: the local steps go to a side ref, and health, remote show and the log say so', async () => {
  const at = await pushedUpTo18()
  const theirs = remoteRef(MAIN) as string
  cut(at, false)
  await server.down() // nothing here, nor the remote, can say 004–018 were given
  await p.restart()
  // Nothing here knew of 004–018: new steps took those numbers, on a history the remote lacks.
  await step('t4')
  await step('t5')
  await p.settled()
  expect(steps('agents/main')).toEqual(numbered(1, 5))
  await server.up()
  await eventually(() => remoteRef(SIDE) === localTip(), 20_000, 'pushed beside the remote')
  await eventually(
    () => readPushState(p.home, 'default')?.diverged?.main?.pushed?.step === 5,
    10_000,
    'state written',
  )
  expect(remoteRef(MAIN)).toBe(theirs) // the remote's 004–018 stay
  expect(steps(MAIN, bare)).toEqual(numbered(1, 18))
  const health = (await (await fetch(`${p.url}/_holdfast/health`)).json()) as {
    remote: { warnings: string[]; diverged: Record<string, unknown> }[]
  }
  expect(health.remote[0]?.warnings).toEqual([
    expect.stringMatching(/^main: .* diverged after step 003; both are kept/),
  ])
  expect(health.remote[0]?.diverged.main).toMatchObject({ base_step: 3, remote_step: 18, side_ref: SIDE })
  const shown = cli(['remote', 'show', 'default', '--home', p.home])
  expect(shown.stdout).toMatch(/DIVERGED main: .* both are kept/)
  expect(shown.stdout).toMatch(new RegExp(`pushed up to step 005 to ${SIDE}`))
  expect(lines.filter((l) => l.level === 40).map((l) => String(l.msg))).toContainEqual(
    expect.stringMatching(/default\/main: .* diverged after step 003; both are kept/),
  )
  // The next start knows the remote's copy goes to 018: no number of it is given again, and
  // this machine's steps keep going beside it.
  await p.restart()
  await step('t19')
  await p.settled()
  expect(steps('agents/main')).toEqual([...numbered(1, 5), '019'])
  await eventually(() => remoteRef(SIDE) === localTip(), 20_000, 'step 019 pushed beside')
  expect(remoteRef(MAIN)).toBe(theirs)
  expect(fs.readdirSync(path.join(p.home, 'quarantine', 'default', 'main'))).toEqual(['lost-006-018.txt'])
})

test('a start whose remote is down serves all the same, numbers after what was pushed, and says the fetch failed', async () => {
  const at = await pushedUpTo18()
  cut(at, true)
  await server.down()
  await p.restart()
  await step('s19')
  await p.settled()
  expect(steps('agents/main')).toEqual([...numbered(1, 3), '019'])
  expect(lines.map((l) => String(l.msg))).toContainEqual(
    expect.stringMatching(/behind what was pushed to holdfast, and fetching it back failed/),
  )
  // Once the remote answers, the two histories are kept side by side, not refused for good.
  await server.up()
  await step('s20')
  await p.settled()
  await eventually(
    () => remoteRef('refs/holdfast/laptop-a/diverged/main/after-003') === localTip(),
    20_000,
    'pushed beside the remote',
  )
  expect(steps(MAIN, bare)).toEqual(numbered(1, 18))
})
