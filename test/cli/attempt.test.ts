/**
 * cli/attempt (`holdfast attempt <ws> --from … --goal … --role …`), in process against a proxy:
 * the child ids on stdout, each attempt's progress on stderr (waiting, streaming, done with its
 * first step's model, tokens and cost; refused; failed with the status); exit 1 only when no
 * attempt succeeded; a --from that resolves to nothing, or a clean start without --parent, is one
 * refusal line with nothing fired.
 */
import { readOps } from '../../proxy/store/ops-log'
import { git } from '../support/harness'
import { startAttemptsProxy, WS, type AttemptsProxy } from '../proxy/attempts/proxy.support'
import { runCli } from './inprocess.support'

let a: AttemptsProxy

beforeAll(async () => {
  a = await startAttemptsProxy(2)
})
afterAll(() => a.close())
beforeEach(() => a.fake.reset())

const attempt = (...args: string[]) => runCli(['attempt', WS, ...args, '--home', a.p.home])
const refs = (): string => git(a.p.repo(WS), 'for-each-ref', '--format=%(refname)').trim()
const CHILD = /^main-\d{8}T\d{6}Z-[0-9a-f]{4}$/

describe('holdfast attempt', () => {
  it("prints each child on stdout and each attempt's progress on stderr, ending with its first step's numbers", async () => {
    const r = await attempt(
      '--from',
      'main@002',
      '--goal',
      'Review.',
      '--role',
      'reviewer',
      '--role',
      'writer',
    )
    expect(r.code).toBe(0)
    const children = r.stdout.trimEnd().split('\n')
    expect(children).toHaveLength(2)
    for (const c of children) expect(c).toMatch(CHILD)
    const lines = r.stderr.trimEnd().split('\n')
    for (const [role, model] of [
      ['reviewer', 'claude-haiku-4-5'],
      ['writer', 'claude-opus-4-5'],
    ] as const) {
      const mine = lines.filter((l) => l.startsWith(`${role.padEnd(14)} `)).map((l) => l.slice(15))
      const child = mine[0]!.split(':')[0]!
      expect(children).toContain(child)
      expect(mine).toEqual([
        `${child}: waiting`,
        expect.stringMatching(new RegExp(`^${child}: streaming \\(first byte after \\d+ms\\)$`)),
        expect.stringMatching(
          new RegExp(
            `^${child}: done: step 001 ${model}, input \\d+, cache read \\d+, output \\d+, \\$\\d+\\.\\d+, \\d+ms$`,
          ),
        ),
      ])
    }
  })

  it('goes on past a refused role, saying why, and succeeds with the others', async () => {
    const r = await attempt('--from', 'main@001', '--goal', 'Go.', '--role', 'nokey', '--role', 'critic')
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/^main-\S+\n$/)
    expect(r.stderr).toMatch(
      /^nokey {10}refused: role "nokey" routes to provider row "anthropic", which names no api_key_env/m,
    )
    expect(a.fake.received).toHaveLength(1)
  })

  it('exits 1 when every attempt is refused or fails, still naming a child whose first step failed', async () => {
    const refused = await attempt('--from', 'main@001', '--goal', 'Go.', '--role', 'nokey', '--role', 'poet')
    expect(refused.code).toBe(1)
    expect(refused.stdout).toBe('')
    expect(refused.stderr).toMatch(/holdfast: no attempt succeeded \(2 of 2 refused or failed\)\n$/)

    a.fake.enqueue({ status: 529, errorMessage: 'Overloaded' })
    const failed = await attempt('--from', 'main@001', '--goal', 'Go.', '--role', 'reviewer')
    expect(failed.code).toBe(1)
    const child = failed.stdout.trim()
    expect(child).toMatch(CHILD)
    expect(failed.stderr).toContain(`reviewer       ${child}: failed (529): Overloaded\n`)
    expect(failed.stderr).toMatch(/holdfast: no attempt succeeded \(1 of 1 refused or failed\)\n$/)
  })

  it('refuses a --from that resolves to nothing, and a clean start without --parent, firing nothing', async () => {
    const before = [refs(), readOps(a.p.home).length]
    const unknown = await attempt('--from', 'main@009', '--goal', 'Go.', '--role', 'reviewer')
    expect(unknown).toEqual({
      code: 1,
      stdout: '',
      stderr: 'holdfast: --from main@009: agent "main" has no committed step 009\n',
    })
    const clean = await attempt('--from', 'config/default', '--goal', 'Go.', '--role', 'reviewer')
    expect(clean).toEqual({
      code: 1,
      stdout: '',
      stderr: 'holdfast: --parent is required: config/default is not a step of an agent branch\n',
    })
    expect([refs(), readOps(a.p.home).length]).toEqual(before)
    expect(a.fake.received).toHaveLength(0)
  })

  it('starts clean from config/<name> with --parent', async () => {
    const r = await attempt(
      '--from',
      'config/default',
      '--parent',
      'main',
      '--goal',
      'Fresh.',
      '--role',
      'critic',
    )
    expect(r.code).toBe(0)
    expect(JSON.parse(a.fake.received[0]!.body.toString())).toMatchObject({
      model: 'claude-haiku-4-5',
      max_tokens: 321,
      messages: [{ role: 'user', content: 'Fresh.' }],
    })
  })
})
