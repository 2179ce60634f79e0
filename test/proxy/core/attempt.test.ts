/** The attempt argv (core/attempt): exactly litany's dispatch shape, the goal verbatim, pins in order. */
import { checkPins, childId, dispatchArgv, parseDispatchArgv, skillPin } from '../../../proxy/core/attempt'

const base = {
  role: 'reviewer',
  ws: 'proj',
  parent: 'main',
  goal: 'Review  this,\nplease.',
  from: 'abc123',
  pins: [],
}

describe('the dispatch argv', () => {
  it('is exactly dispatch <role> <ws> <parent> --goal <goal> --from <ref>, the goal verbatim', () => {
    expect(dispatchArgv(base)).toEqual([
      'dispatch',
      'reviewer',
      'proj',
      'main',
      '--goal',
      'Review  this,\nplease.',
      '--from',
      'abc123',
    ])
  })

  it('pins each skill as skills/<s>/SKILL.md=<home>/skills/<s>/SKILL.md, in order', () => {
    const pins = ['b', 'a'].map((s) => skillPin(s, '/h/'))
    expect(dispatchArgv({ ...base, pins }).slice(8)).toEqual([
      '--pin',
      'skills/b/SKILL.md=/h/skills/b/SKILL.md',
      '--pin',
      'skills/a/SKILL.md=/h/skills/a/SKILL.md',
    ])
  })

  it('differs between a clean start and a fork only in the ref', () => {
    const fork = dispatchArgv(base)
    const clean = dispatchArgv({ ...base, from: 'config/default' })
    expect(fork.map((w, i) => (w === clean[i] ? '=' : w))).toEqual([
      '=',
      '=',
      '=',
      '=',
      '=',
      '=',
      '=',
      'abc123',
    ])
  })

  it('refuses an empty --from', () => {
    expect(() => dispatchArgv({ ...base, from: '' })).toThrow(/--from is empty/)
  })

  it('parses back what it composes', () => {
    const pins = [{ dest: 'skills/x/SKILL.md', src: '/h/skills/x/SKILL.md' }]
    expect(parseDispatchArgv(dispatchArgv({ ...base, pins }))).toEqual({ ok: true, args: { ...base, pins } })
  })

  it('refuses an argv without a goal, with an empty goal, or with extra words', () => {
    expect(parseDispatchArgv(['dispatch', 'r', 'w', 'p', '--from', 'x'])).toMatchObject({ ok: false })
    expect(parseDispatchArgv(['dispatch', 'r', 'w', 'p', '--goal', '  ', '--from', 'x'])).toMatchObject({
      ok: false,
      error: expect.stringMatching(/goal is empty/),
    })
    expect(parseDispatchArgv(['dispatch', 'r', 'w', 'p', 'q', '--goal', 'g', '--from', 'x'])).toMatchObject({
      ok: false,
    })
  })
})

describe('pin destinations', () => {
  it.each([
    ['/abs/path', /relative/],
    ['a//b', /segment/],
    ['a/./b', /segment/],
    ['../x', /segment/],
    ['x/.git/config', /segment/],
    ['goal.md', /reserved/],
    ['steps/main/001/request.json', /reserved/],
    ['.holdfast/x', /reserved/],
  ])('refuses %s', (dest, why) => {
    expect(checkPins([{ dest, src: '/s' }])).toMatch(why)
  })

  it('refuses a destination given twice, and accepts clean distinct ones', () => {
    expect(
      checkPins([
        { dest: 'a/b.md', src: '/1' },
        { dest: 'a/b.md', src: '/2' },
      ]),
    ).toMatch(/twice/)
    expect(
      checkPins([
        { dest: 'a/b.md', src: '/1' },
        { dest: 'skills/x/SKILL.md', src: '/2' },
      ]),
    ).toBeUndefined()
  })
})

describe('child ids', () => {
  it('are <parent>-<UTC compact timestamp>-<short random>', () => {
    expect(childId('main', new Date('2026-12-02T15:30:42.123Z'), 'k3f9')).toBe('main-20261202T153042Z-k3f9')
  })
})
