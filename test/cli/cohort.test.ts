/**
 * cli/cohort: `columns` (answers side by side, each wrapped at a word boundary to its share of the
 * width, never narrower than 20, heads cut to the column) and `holdfast cohort` in process against
 * a proxy with attempts fired: the header line with the count, one table row per attempt, the
 * answers in full with --full, JSON with --json, and a notch that resolves to nothing refused.
 */
import { columns } from '../../cli/cohort'
import { fireCohort } from '../../proxy/attempts/fire'
import { git } from '../support/harness'
import { startAttemptsProxy, WS, type AttemptsProxy } from '../proxy/attempts/proxy.support'
import { runCli } from './inprocess.support'

describe('columns', () => {
  it('wraps each answer at a word boundary within its share of the width, and pads the shorter column', () => {
    // Width 50, two columns: (50 - 3) / 2 → 23 characters each.
    const out = columns(
      [
        { head: 'reviewer · haiku', body: 'one two three four five six seven eight' },
        { head: 'writer', body: 'short' },
      ],
      50,
    )
    expect(out.split('\n')).toEqual([
      'reviewer · haiku        │ writer',
      '────────────────        │ ──────',
      'one two three four five │ short',
      'six seven eight         │',
      '',
    ])
  })

  it('cuts a word longer than the column, cuts a long head, and never goes narrower than 20', () => {
    const out = columns([{ head: 'h'.repeat(30), body: 'x'.repeat(45) }], 10)
    expect(out.split('\n')).toEqual([
      'h'.repeat(20),
      '─'.repeat(20),
      'x'.repeat(20),
      'x'.repeat(20),
      'x'.repeat(5),
      '',
    ])
  })
})

describe('holdfast cohort', () => {
  let a: AttemptsProxy
  let children: string[]
  beforeAll(async () => {
    a = await startAttemptsProxy(2)
    a.fake.enqueue({ text: 'Looks right.\nBut check the edge case.', times: 2 })
    const results = await fireCohort(
      a.p.home,
      a.p.server.ctx.config,
      { ws: WS, from: 'main@002', goal: 'Review.', roles: ['reviewer', 'writer'], skills: [] },
      'cli',
    )
    children = results.map((r) => r.child as string).sort()
    await a.p.settled()
  })
  afterAll(() => a.close())

  const run = (...args: string[]) => runCli(['cohort', WS, ...args, '--home', a.p.home])

  it('prints the notch and count, then one row per attempt with its role, model, stop reason and first answer line', async () => {
    const r = await run('main@002')
    expect(r.code).toBe(0)
    const notch = git(a.p.repo(WS), 'rev-parse', 'agents/main').trim()
    const lines = r.stdout.trimEnd().split('\n')
    expect(lines[0]).toBe(`cohort of main@002 (${notch.slice(0, 8)}): 2 attempts`)
    expect(lines[1]!.split(/\s{2,}/)).toEqual([
      'child',
      'role',
      'model',
      'stop',
      'input',
      'cache read',
      'cache write',
      'output',
      'cost',
      'latency',
      'answer',
    ])
    expect(lines).toHaveLength(4)
    const rows = lines.slice(2).map((l) => l.split(/\s{2,}/))
    expect(rows.map((c) => c.slice(0, 4))).toEqual([
      [children[0], expect.any(String), expect.stringMatching(/^claude-/), 'end_turn'],
      [children[1], expect.any(String), expect.stringMatching(/^claude-/), 'end_turn'],
    ])
    expect(rows.map((c) => c[1]).sort()).toEqual(['reviewer', 'writer'])
    for (const c of rows) expect(c.at(-1)).toBe('Looks right.')
  })

  it('adds every answer in full side by side with --full', async () => {
    const r = await run('main@002', '--full')
    const full = r.stdout.split('\n\n')[1] ?? ''
    expect(full).toMatch(/^(reviewer · claude-haiku-4-5|writer · claude-opus-4-5) +│ /)
    expect(full).toContain('But check the edge case.')
    expect(full.split('\n')[2]).toMatch(/^Looks right\. +│ Looks right\.$/)
  })

  it('prints the members as JSON with --json', async () => {
    const r = await run('main@002', '--json')
    const json = JSON.parse(r.stdout) as { notch: string; members: Record<string, unknown>[] }
    expect(json.notch).toBe(git(a.p.repo(WS), 'rev-parse', 'agents/main').trim())
    expect(json.members.map((m) => m.child)).toEqual(children)
    for (const m of json.members) {
      expect(m).toMatchObject({
        stop_reason: 'end_turn',
        status: 200,
        answer: 'Looks right.\nBut check the edge case.',
        usage: expect.objectContaining({ input_tokens: expect.any(Number) }),
      })
      expect(Object.keys(m).sort()).toEqual(
        ['answer', 'child', 'cost_usd', 'model', 'role', 'status', 'stop_reason', 'total_ms', 'usage'].sort(),
      )
    }
  })

  it('prints only the header line for a notch without attempts', async () => {
    const r = await run('main@001')
    expect(r.stdout).toMatch(/^cohort of main@001 \([0-9a-f]{8}\): 0 attempts\n$/)
  })

  it('refuses a notch that resolves to nothing, in one line', async () => {
    const r = await run('main@007')
    expect(r).toEqual({
      code: 1,
      stdout: '',
      stderr: 'holdfast: --from main@007: agent "main" has no committed step 007\n',
    })
  })
})
