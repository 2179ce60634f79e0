/**
 * Cohorts fired by a git commit on `attempts/<name>` (proxy/attempts/trailers): the trailers parse,
 * a pushed commit fires its cohort once from the workspace's hook (the push returns at once), and
 * a second push of the same commit fires nothing.
 */
import { cohortOf } from '../../../proxy/attempts/cohort'
import { parseAttemptMessage } from '../../../proxy/attempts/trailers'
import { setRole } from '../../../proxy/store/config/edit'
import { openRepo } from '../../../proxy/store/git'
import { readOps } from '../../../proxy/store/ops-log'
import { Workspace } from '../../../proxy/store/workspace'
import { startFakeUpstream } from '../../support/fake-upstream'
import { eventually, startProxy, type Proxy } from '../../support/harness'
import { cleanup, git, gitOk, IDENTITY, tempDir } from '../../hooks/helpers'

describe('an attempts commit message', () => {
  it('asks for a cohort with its trailers, the rest of the message being the goal', () => {
    const message =
      'Review step 2.\n\nLook for races.\n\nAttempt-From: main@002\nAttempt-Role: reviewer\nAttempt-Role: writer\nAttempt-Skill: strict\nAttempt-Parent: main\n'
    expect(parseAttemptMessage(message, 'ws')).toEqual({
      ws: 'ws',
      from: 'main@002',
      goal: 'Review step 2.\n\nLook for races.',
      roles: ['reviewer', 'writer'],
      skills: ['strict'],
      parent: 'main',
    })
  })

  it('asks for nothing without Attempt-From, without a role, or without a goal', () => {
    expect(parseAttemptMessage('Goal\n\nAttempt-Role: r\n', 'ws')).toBeUndefined()
    expect(parseAttemptMessage('Goal\n\nAttempt-From: main@001\n', 'ws')).toBeUndefined()
    expect(parseAttemptMessage('Attempt-From: main@001\nAttempt-Role: r\n', 'ws')).toBeUndefined()
  })
})

describe('an attempts commit pushed to the workspace', () => {
  let p: Proxy
  const WS = 'trail'
  beforeAll(async () => {
    process.env.HF_TRAILER_KEY = 'sk-trailer'
    const fake = await startFakeUpstream()
    p = await startProxy({
      fake,
      config: {
        providers: {
          keyed: { dialect: 'anthropic', base_url: fake.anthropicBaseUrl, api_key_env: 'HF_TRAILER_KEY' },
        },
      },
    })
    for (const q of ['one', 'two']) {
      const res = await fetch(`${p.url}/w/${WS}/a/main/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
        body: JSON.stringify({
          model: 'claude-sonnet-4-5',
          max_tokens: 50,
          messages: [{ role: 'user', content: q }],
        }),
      })
      await res.arrayBuffer()
    }
    await p.settled()
    const repo = openRepo(p.repo(WS))
    const rows = p.server.ctx.config.providers
    await setRole(repo, 'default', 'reviewer', { provider: 'keyed', model: 'claude-haiku-4-5' }, rows)
    await setRole(repo, 'default', 'writer', { provider: 'keyed', model: 'claude-opus-4-5' }, rows)
  })
  afterAll(async () => {
    await p.close()
    await p.fake.close()
    cleanup()
  })

  it('fires the cohort once, from the hook, with the message as the goal', async () => {
    const clone = tempDir()
    await gitOk(clone, ['clone', '-q', p.repo(WS), '.'])
    await gitOk(clone, ['checkout', '-q', '-b', 'attempts/review'])
    const message =
      'Review the second answer.\n\nAttempt-From: main@002\nAttempt-Role: reviewer\nAttempt-Role: writer\n'
    await gitOk(clone, [...IDENTITY, 'commit', '-q', '--allow-empty', '-m', message])
    const push = await git(clone, ['push', '-q', 'origin', 'attempts/review'])
    expect(push.code).toBe(0)
    const hookRows = () => readOps(p.home).filter((r) => r.origin === 'hook')
    await eventually(() => hookRows().length === 2, 30_000, 'two ops rows from the hook')
    expect(
      hookRows()
        .map((r) => [r.argv[1], r.exit, r.argv[5]])
        .sort(),
    ).toEqual([
      ['reviewer', 0, 'Review the second answer.'],
      ['writer', 0, 'Review the second answer.'],
    ])
    await p.settled()
    const { members } = await cohortOf(new Workspace(p.home, WS), 'main@002')
    expect(members.map((m) => m.role).sort()).toEqual(['reviewer', 'writer'])

    // The same commit pushed again (to another attempts branch) does not fire again.
    const again = await git(clone, ['push', '-q', 'origin', 'attempts/review:attempts/again'])
    expect(again.code).toBe(0)
    await new Promise((r) => setTimeout(r, 3000))
    expect(hookRows()).toHaveLength(2)
  }, 60_000)
})
