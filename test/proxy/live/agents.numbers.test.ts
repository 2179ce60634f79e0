/**
 * live/agents' numbering: a number once given is never given again, whatever a cut left. Beside
 * the journal and the quarantine, what the remote was told (`remote/push.json`) counts: a branch a
 * power cut rewound below what was pushed numbers its next step after the pushed one (not over the
 * remote's copies, which would make every later push a refused non-fast-forward), notes the range
 * as lost, and says so in the log.
 */
import fs from 'node:fs'
import path from 'node:path'
import { writePushState } from '../../../proxy/remote/state'
import { git, startProxy, type Proxy } from '../../support/harness'
import { postAnthropic } from '../../support/raw-http'

let p: Proxy
beforeAll(async () => {
  p = await startProxy()
})
afterAll(() => p.close())

const step = (content: string) =>
  postAnthropic(
    p.url,
    '/w/cut/a/main/v1/messages',
    JSON.stringify({ model: 'claude-fake-1', max_tokens: 8, messages: [{ role: 'user', content }] }),
  )

test('a branch rewound below what the remote holds numbers its next step after the pushed one, and notes the range lost', async () => {
  for (const c of ['one', 'two', 'three']) expect((await step(c)).status).toBe(200)
  await p.settled()
  await p.stop()
  // The remote was told of steps up to 018 before a power cut took 004–018 from this machine.
  await writePushState(p.home, 'cut', {
    url: 'https://example.invalid/team.git',
    machine: 'laptop',
    form: 'custom',
    agents: { main: { step: 18, commit: 'f'.repeat(40), at: new Date().toISOString() } },
    refused: {},
    last_ok_at: new Date().toISOString(),
    last_error: null,
  })
  await p.restart()
  expect((await step('four')).status).toBe(200)
  await p.settled()
  const steps = git(p.repo('cut'), 'ls-tree', '--name-only', 'agents/main', 'steps/main/').trim().split('\n')
  expect(steps.map((s) => path.basename(s))).toEqual(['001', '002', '003', '019'])
  const quarantine = fs.readdirSync(path.join(p.home, 'quarantine', 'cut', 'main'))
  expect(quarantine).toContain('lost-004-018.txt')
})

test("a branch a cut rewound below its reflog numbers its next step after the reflog's highest, with no remote at all", async () => {
  const agent = (n: string) => `/w/reflog/a/${n}/v1/messages`
  const send = (content: string) =>
    postAnthropic(
      p.url,
      agent('main'),
      JSON.stringify({ model: 'claude-fake-1', max_tokens: 8, messages: [{ role: 'user', content }] }),
    )
  for (const c of ['one', 'two', 'three', 'four', 'five']) expect((await send(c)).status).toBe(200)
  await p.settled()
  await p.stop()
  // The ref file went back to step 002 (its rename was not on the disk) and the journal's
  // frames went with the cut; the reflog lines stayed.
  fs.rmSync(path.join(p.home, 'workspaces', 'reflog', 'journal'), { recursive: true, force: true })
  const third = git(p.repo('reflog'), 'rev-parse', 'agents/main~3').trim()
  fs.writeFileSync(path.join(p.repo('reflog'), 'refs', 'heads', 'agents', 'main'), `${third}\n`)
  await p.restart()
  expect((await send('six')).status).toBe(200)
  await p.settled()
  const steps = git(p.repo('reflog'), 'ls-tree', '--name-only', 'agents/main', 'steps/main/')
    .trim()
    .split('\n')
  expect(steps.map((s) => path.basename(s))).toEqual(['001', '002', '006'])
  expect(fs.readdirSync(path.join(p.home, 'quarantine', 'reflog', 'main'))).toEqual(['lost-003-005.txt'])
})
