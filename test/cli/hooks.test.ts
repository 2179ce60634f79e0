/**
 * cli/hooks, in process: `hooks install` refuses a workspace that does not exist (creating nothing)
 * and says whether it wrote the hook or found it up to date; the hidden `hook reference-transaction`
 * reads the ref lines on stdin, prints only refusals and sets exit 1 only to refuse a `prepared`
 * transaction; `hook` is not listed by `--help`.
 */
import fs from 'node:fs'
import path from 'node:path'
import { Readable } from 'node:stream'
import { cleanup, commitObject, homeWithWorkspace, tipOf } from '../hooks/helpers'
import { referenceTransactionScript } from '../../proxy/store/hook-install'
import { runCli } from './inprocess.support'

let home: string
let repo: string

beforeAll(async () => {
  ;({ home, repo } = await homeWithWorkspace('proj'))
})
afterAll(() => cleanup())

/** Run with `input` as the process's stdin (what git writes to the hook). */
async function withStdin(input: string, args: string[]) {
  const saved = Object.getOwnPropertyDescriptor(process, 'stdin') as PropertyDescriptor
  Object.defineProperty(process, 'stdin', { value: Readable.from([Buffer.from(input)]), configurable: true })
  try {
    return await runCli(args)
  } finally {
    Object.defineProperty(process, 'stdin', saved)
  }
}

const hookFile = (): string => path.join(repo, 'hooks', 'reference-transaction')

describe('holdfast hooks install', () => {
  it('writes a missing hook, then says it is up to date', async () => {
    fs.rmSync(hookFile())
    const first = await runCli(['hooks', 'install', 'proj', '--home', home])
    expect(first).toEqual({ code: 0, stdout: `installed ${hookFile()}\n`, stderr: '' })
    expect(fs.readFileSync(hookFile(), 'utf8')).toBe(referenceTransactionScript(home, 'proj'))
    expect(fs.statSync(hookFile()).mode & 0o100).toBe(0o100)
    const again = await runCli(['hooks', 'install', 'proj', '--home', home])
    expect(again.stdout).toBe(`up to date: ${hookFile()}\n`)
  })

  it('refuses a workspace that does not exist, saying how one is created, and creates nothing', async () => {
    const r = await runCli(['hooks', 'install', 'nowhere', '--home', home])
    expect(r.code).toBe(1)
    expect(r.stdout).toBe('')
    expect(r.stderr).toBe(
      `holdfast: no workspace "nowhere" in ${home} (it is created by its first request or \`holdfast config set-role\`)\n`,
    )
    expect(fs.existsSync(path.join(home, 'workspaces', 'nowhere'))).toBe(false)
  })
})

describe('holdfast hook reference-transaction (hidden)', () => {
  const args = (state: string) => ['hook', 'reference-transaction', state, '--home', home, '--ws', 'proj']

  it('refuses a prepared config update whose providers.yaml does not validate, one line per ref, exit 1', async () => {
    const tip = await tipOf(repo)
    const bad = await commitObject(repo, {
      'providers.yaml': 'roles:\n  r: {provider: nowhere, model: m}\n',
    })
    const r = await withStdin(`${tip} ${bad} refs/heads/config/default\n`, args('prepared'))
    expect(r.code).toBe(1)
    expect(r.stdout).toBe('')
    const lines = r.stderr.trimEnd().split('\n')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(/^holdfast: refusing refs\/heads\/config\/default: .*nowhere/)
  })

  it('passes a valid prepared update and any aborted one silently with exit 0', async () => {
    const tip = await tipOf(repo)
    const good = await commitObject(repo, {
      'providers.yaml': 'roles:\n  r: {provider: anthropic, model: m}\n',
    })
    const bad = await commitObject(repo, { 'providers.yaml': 'roles: [' })
    expect(await withStdin(`${tip} ${good} refs/heads/config/default\n`, args('prepared'))).toEqual({
      code: 0,
      stdout: '',
      stderr: '',
    })
    expect(await withStdin(`${tip} ${bad} refs/heads/config/default\n`, args('aborted'))).toEqual({
      code: 0,
      stdout: '',
      stderr: '',
    })
    // Refs outside config/ are not its business, whatever they point at.
    expect((await withStdin(`${tip} ${bad} refs/heads/agents/x\n`, args('prepared'))).code).toBe(0)
  })

  it('is not listed by --help, while hooks is', async () => {
    const help = await runCli(['--help'])
    expect(help.code).toBe(0)
    expect(help.stdout).toMatch(/^ {2}hooks\b/m)
    expect(help.stdout).not.toMatch(/^ {2}hook\b(?!s)/m)
  })
})
