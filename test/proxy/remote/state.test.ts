/**
 * proxy/remote/state.ts: the push state and the pull report are replaced whole under
 * `<ws>/remote/`, read back as written, read as undefined when absent or damaged, and a report's
 * refusals (diverged, refused, failed, or a failed fetch) become one sentence each.
 */
import fs from 'node:fs'
import {
  type PushState,
  pushStateFor,
  divergedSentence,
  recordPush,
  type PullReport,
  pullRefusals,
  pullReportPath,
  pushStatePath,
  readPullReport,
  readPushState,
  writePullReport,
  writePushState,
} from '../../../proxy/remote/state'
import { tempHome } from '../../support/harness'

let home: string
beforeEach(() => {
  home = tempHome()
})
afterEach(() => fs.rmSync(home, { recursive: true, force: true }))

const report = (over: Partial<PullReport> = {}): PullReport => ({
  at: '2026-12-06T00:00:00.000Z',
  url: 'git://127.0.0.1:1/team.git',
  error: null,
  lineages: [
    { lineage: 'default', outcome: 'moved', local: 'a'.repeat(40), remote: 'b'.repeat(40) },
    {
      lineage: 'exp',
      outcome: 'refused',
      local: 'c'.repeat(40),
      remote: 'd'.repeat(40),
      reason: 'providers.yaml: roles.r.provider: "x" is not a provider row',
    },
    { lineage: 'side', outcome: 'diverged', local: null, remote: 'e'.repeat(40), reason: 'diverged' },
  ],
  ...over,
})

describe('remote state files', () => {
  it('reads back what was written, under <ws>/remote/', async () => {
    const state = {
      url: 'u',
      machine: 'm',
      form: 'custom' as const,
      agents: { main: { step: 3, commit: 'f'.repeat(40), at: 't' } },
      refused: {},
      last_ok_at: 't',
      last_error: null,
    }
    await writePushState(home, 'w', state)
    await writePullReport(home, 'w', report())
    expect(pushStatePath(home, 'w')).toBe(`${home}/workspaces/w/remote/push.json`)
    expect(readPushState(home, 'w')).toEqual(state)
    expect(readPullReport(home, 'w')).toEqual(report())
  })

  it('reads an absent or damaged file as undefined', () => {
    expect(readPushState(home, 'w')).toBeUndefined()
    fs.mkdirSync(`${home}/workspaces/w/remote`, { recursive: true })
    fs.writeFileSync(pullReportPath(home, 'w'), '{"at": ')
    expect(readPullReport(home, 'w')).toBeUndefined()
  })

  it('says which lineages did not follow the remote, and why, one sentence each', () => {
    expect(pullRefusals(undefined)).toEqual([])
    expect(pullRefusals(report())).toEqual([
      `remote holdfast (git://127.0.0.1:1/team.git): config/exp stays at cccccccc, not dddddddd: providers.yaml: roles.r.provider: "x" is not a provider row`,
      'remote holdfast (git://127.0.0.1:1/team.git): config/side stays at (none), not eeeeeeee: diverged',
    ])
    expect(pullRefusals(report({ error: 'Connection refused', lineages: [] }))).toEqual([
      'remote holdfast (git://127.0.0.1:1/team.git): fetch failed at 2026-12-06T00:00:00.000Z: Connection refused',
    ])
  })
})

describe('pushStateFor and recordPush', () => {
  const oid = (c: string) => c.repeat(40)
  it('keeps the state of the same remote and machine, and starts afresh for another', () => {
    const s = pushStateFor(undefined, 'git://h/t.git', 'm', 'auto')
    expect(s).toEqual({
      url: 'git://h/t.git',
      machine: 'm',
      form: 'custom',
      agents: {},
      refused: {},
      diverged: {},
      healed: {},
      last_ok_at: null,
      last_error: null,
    })
    s.form = 'heads'
    s.agents.main = { step: 1, commit: oid('a'), at: 't' }
    expect(pushStateFor(s, 'git://h/t.git', 'm', 'auto')).toBe(s)
    expect(pushStateFor(s, 'git://h/t.git', 'm', 'custom').form).toBe('custom')
    expect(pushStateFor(s, 'git://h/other.git', 'm', 'auto').agents).toEqual({})
    expect(pushStateFor(s, 'git://h/t.git', 'n', 'auto').agents).toEqual({})
  })

  it('records each pushed agent up to the step it carried, and each refusal with why, warning once', () => {
    const state: PushState = pushStateFor(undefined, 'u', 'm', 'auto')
    state.last_error = 'earlier failure'
    const sent = new Map([
      ['a', { step: 3, commit: oid('a') }],
      ['b', { step: 7, commit: oid('b') }],
    ])
    const lines = [
      { dst: 'refs/holdfast/m/agents/a', outcome: 'pushed' as const, summary: '[new reference]' },
      {
        dst: 'refs/holdfast/m/agents/b',
        outcome: 'not-fast-forward' as const,
        summary: '[rejected] (fetch first)',
      },
    ]
    const first = recordPush(state, sent, lines, 't1')
    expect(first).toEqual([
      {
        agent: 'b',
        step: 7,
        reason: expect.stringMatching(/not a fast-forward/),
        first: true,
        diverging: true,
      },
    ])
    expect(state.agents).toEqual({ a: { step: 3, commit: oid('a'), at: 't1' } })
    expect(state.refused.b).toMatchObject({ step: 7, commit: oid('b') })
    expect([state.last_ok_at, state.last_error]).toEqual(['t1', null])
    expect(recordPush(state, sent, lines, 't2')[0]?.first).toBe(false)
    recordPush(state, sent, [{ ...lines[1]!, outcome: 'pushed' }], 't3')
    expect(state.refused).toEqual({})
    expect(state.agents.b).toEqual({ step: 7, commit: oid('b'), at: 't3' })
  })

  it("records a push to a diverged agent's side ref on its divergence, never as its own ref pushed, and compares no refusal of it", () => {
    const state: PushState = pushStateFor(undefined, 'u', 'm', 'auto')
    state.agents.a = { step: 18, commit: oid('r'), at: 't0' }
    const side = 'refs/holdfast/m/diverged/a/after-003'
    state.diverged = {
      a: {
        base_step: 3,
        remote_step: 18,
        remote_commit: oid('r'),
        local_step: 5,
        side_ref: side,
        pushed: null,
        at: 't0',
      },
    }
    const sent = new Map([['a', { step: 5, commit: oid('l') }]])
    expect(
      recordPush(state, sent, [{ dst: side, outcome: 'pushed', summary: '[new reference]' }], 't1'),
    ).toEqual([])
    expect(state.diverged.a?.pushed).toEqual({ step: 5, commit: oid('l') })
    expect(state.agents.a).toEqual({ step: 18, commit: oid('r'), at: 't0' })
    const refused = recordPush(
      state,
      sent,
      [{ dst: side, outcome: 'not-fast-forward', summary: '[rejected]' }],
      't2',
    )
    expect(refused).toEqual([expect.objectContaining({ agent: 'a', diverging: false })])
  })

  it("says a divergence in one sentence: both sides, where they split, and where this machine's went", () => {
    expect(
      divergedSentence('main', {
        base_step: 3,
        remote_step: 18,
        remote_commit: oid('r'),
        local_step: 5,
        side_ref: 'refs/holdfast/m/diverged/main/after-003',
        pushed: { step: 5, commit: oid('l') },
        at: 't',
      }),
    ).toBe(
      "main: the remote's history (up to step 018) and this machine's (up to 005) diverged after step 003; both are kept: the remote's where it was, this machine's pushed up to step 005 to refs/holdfast/m/diverged/main/after-003",
    )
  })
})
