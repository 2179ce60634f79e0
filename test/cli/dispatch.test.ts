/**
 * cli/dispatch (`holdfast dispatch <role> <ws> <parent> --goal … --from … [--pin dest=src]…`), in
 * process: the child id on stdout and an ops-log row; a malformed --pin refused before anything is
 * dispatched or logged; a refused dispatch is one line and exit 1; without a running serve it is
 * refused (and logged); an external dispatcher from holdfast.yaml is announced on stderr, its
 * stdout passed through and its exit code made ours.
 */
import fs from 'node:fs'
import path from 'node:path'
import { readOps } from '../../proxy/store/ops-log'
import { git, tempHome } from '../support/harness'
import { startAttemptsProxy, WS, type AttemptsProxy } from '../proxy/attempts/proxy.support'
import { runCli } from './inprocess.support'

let a: AttemptsProxy
const homes: string[] = []

beforeAll(async () => {
  a = await startAttemptsProxy(2)
})
afterAll(async () => {
  await a.close()
  for (const h of homes) fs.rmSync(h, { recursive: true, force: true })
})

const refs = (): string => git(a.p.repo(WS), 'for-each-ref', '--format=%(refname)').trim()
const dispatch = (home: string, ...args: string[]) => runCli(['dispatch', ...args, '--home', home])

describe('holdfast dispatch', () => {
  it('prints the child id, records its first step on agents/<child>, and logs the row', async () => {
    const r = await dispatch(a.p.home, 'reviewer', WS, 'main', '--goal', 'Check it.', '--from', 'main@002')
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/^main-\d{8}T\d{6}Z-[0-9a-f]{4}\n$/)
    const child = r.stdout.trim()
    await a.p.settled()
    expect(git(a.p.repo(WS), 'log', '--format=%s', `agents/${child}`).split('\n').slice(0, 2)).toEqual([
      `step 001: claude-haiku-4-5 [${child}]`,
      `dispatch: reviewer [${child}]`,
    ])
    expect(readOps(a.p.home).at(-1)).toMatchObject({ exit: 0, origin: 'cli', stdout: `${child}\n` })
  })

  it('refuses a --pin that is not <dest>=<src> before dispatching or logging anything', async () => {
    const before = [refs(), readOps(a.p.home).length]
    for (const spec of ['nodest', '=src', 'dest=']) {
      const r = await dispatch(
        a.p.home,
        'reviewer',
        WS,
        'main',
        '--goal',
        'g',
        '--from',
        'main@001',
        '--pin',
        spec,
      )
      expect(r).toEqual({ code: 1, stdout: '', stderr: `holdfast: --pin "${spec}" is not <dest>=<src>\n` })
    }
    expect([refs(), readOps(a.p.home).length]).toEqual(before)
    expect(a.fake.received.filter((x) => x.body.includes('"g"'))).toEqual([])
  })

  it('refuses an undeclared role in one line with exit 1, creating no ref', async () => {
    const before = refs()
    const r = await dispatch(a.p.home, 'poet', WS, 'main', '--goal', 'g', '--from', 'main@001')
    expect(r.code).toBe(1)
    expect(r.stdout).toBe('')
    expect(r.stderr).toMatch(
      /^holdfast: role "poet" is not declared at the followed config of main@001 .*\n$/,
    )
    expect(r.stderr.split('\n')).toHaveLength(2)
    expect(refs()).toBe(before)
  })

  it('refuses when no serve runs on the home, and still logs the dispatch', async () => {
    const home = tempHome()
    homes.push(home)
    fs.writeFileSync(path.join(home, 'holdfast.yaml'), '{}\n')
    const r = await dispatch(home, 'reviewer', WS, 'main', '--goal', 'g', '--from', 'main@001')
    expect(r).toEqual({
      code: 1,
      stdout: '',
      stderr: `holdfast: holdfast serve is not running on ${home}; start holdfast serve first\n`,
    })
    expect(readOps(home)).toEqual([
      expect.objectContaining({
        exit: 1,
        origin: 'cli',
        argv: ['dispatch', 'reviewer', WS, 'main', '--goal', 'g', '--from', 'main@001'],
      }),
    ])
  })

  it("runs holdfast.yaml's dispatcher with the argv, says so on stderr, and makes its output and exit code ours", async () => {
    const home = tempHome()
    homes.push(home)
    const script =
      'const a = process.argv.slice(1); console.log(JSON.stringify(a)); ' +
      "if (a.includes('fail')) { console.error('no such parent'); process.exit(3) }"
    const command = [process.execPath, '-e', script]
    fs.writeFileSync(path.join(home, 'holdfast.yaml'), JSON.stringify({ dispatcher: { command } }))
    const notice = `holdfast: dispatching through ${command.join(' ')} (no stagger, no progress)\n`
    const args = ['reviewer', 'w', 'main', '--goal', 'g', '--from', 'x', '--pin', 'a.md=/tmp/a']
    const ok = await dispatch(home, ...args)
    expect(ok.code).toBe(0)
    expect(ok.stderr).toBe(notice)
    expect(JSON.parse(ok.stdout)).toEqual(['dispatch', ...args])
    const failed = await dispatch(home, 'reviewer', 'w', 'fail', '--goal', 'g', '--from', 'x')
    expect(failed.code).toBe(3)
    expect(failed.stderr).toBe(`${notice}holdfast: no such parent\n`)
    expect(JSON.parse(failed.stdout)).toContain('fail')
    expect(readOps(home).map((row) => row.exit)).toEqual([0, 3])
  })
})
