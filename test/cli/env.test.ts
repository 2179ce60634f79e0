/**
 * cli/env beyond what test/cli/program.commands.test.ts covers: the token as a header export
 * (`HOLDFAST_TOKEN` over holdfast.yaml's), shell quoting, names escaped in the path, holdfast.yaml's
 * default agent and workspace filling in the one not given, a bad name refused, and a server that is
 * not running said without reading (or writing) holdfast.yaml.
 */
import fs from 'node:fs'
import path from 'node:path'
import { envLines, envVars } from '../../cli/env'
import { tempHome } from '../support/harness'
import { runCli } from './inprocess.support'

const URL = 'http://127.0.0.1:8787'
const homes: string[] = []
const savedToken = process.env.HOLDFAST_TOKEN

/** A home whose serve.json names this (live) process, with holdfast.yaml as given. */
function homeServing(yaml: string): string {
  const home = tempHome()
  homes.push(home)
  fs.writeFileSync(path.join(home, 'holdfast.yaml'), yaml)
  fs.writeFileSync(
    path.join(home, 'serve.json'),
    JSON.stringify({ url: URL, pid: process.pid, started_at: new Date().toISOString(), home }),
  )
  return home
}

beforeEach(() => delete process.env.HOLDFAST_TOKEN)
afterAll(() => {
  if (savedToken === undefined) delete process.env.HOLDFAST_TOKEN
  else process.env.HOLDFAST_TOKEN = savedToken
  for (const h of homes) fs.rmSync(h, { recursive: true, force: true })
})

describe('envVars and envLines', () => {
  it('addresses the defaults "default"/"main" for the half not given, and escapes names in the path', () => {
    expect(envVars(URL, 'proj', undefined, undefined).ANTHROPIC_BASE_URL).toBe(`${URL}/w/proj/a/main`)
    expect(envVars(URL, undefined, 'w', undefined).OPENAI_BASE_URL).toBe(`${URL}/w/default/a/w/v1`)
    expect(envVars(URL, 'a b', 'x#y', undefined).ANTHROPIC_BASE_URL).toBe(`${URL}/w/a%20b/a/x%23y`)
  })

  it('adds the token as a custom header only when there is one', () => {
    expect(envVars(URL, undefined, undefined, 'tok')).toEqual({
      ANTHROPIC_BASE_URL: URL,
      OPENAI_BASE_URL: `${URL}/v1`,
      ANTHROPIC_CUSTOM_HEADERS: 'x-holdfast-token: tok',
      CLAUDE_CODE_GATEWAY_HINT_HEADERS: '1',
    })
    expect(envVars(URL, undefined, undefined, '')).not.toHaveProperty('ANTHROPIC_CUSTOM_HEADERS')
  })

  it('quotes a value the shell would split or expand, and leaves a plain one bare', () => {
    const lines = envLines(URL, undefined, undefined, "it's $HOME")
    expect(lines).toContain(`export ANTHROPIC_BASE_URL=${URL}`)
    expect(lines).toContain(`export ANTHROPIC_CUSTOM_HEADERS='x-holdfast-token: it'\\''s $HOME'`)
  })
})

describe('holdfast env', () => {
  it("uses holdfast.yaml's default agent and workspace for the one not given", async () => {
    const home = homeServing('defaults: {workspace: team, agent: boss}\n')
    const wsOnly = await runCli(['env', '--ws', 'proj', '--home', home])
    expect(wsOnly).toMatchObject({ code: 0, stderr: '' })
    expect(wsOnly.stdout).toContain(`export ANTHROPIC_BASE_URL=${URL}/w/proj/a/boss\n`)
    const agentOnly = await runCli(['env', '--agent', 'worker', '--home', home])
    expect(agentOnly.stdout).toContain(`export OPENAI_BASE_URL=${URL}/w/team/a/worker/v1\n`)
  })

  it("exports the token of holdfast.yaml, and HOLDFAST_TOKEN's instead when it is set", async () => {
    const home = homeServing('token: from-file-0123456789\n')
    const fromFile = await runCli(['env', '--home', home])
    expect(fromFile.stdout).toContain(
      "export ANTHROPIC_CUSTOM_HEADERS='x-holdfast-token: from-file-0123456789'\n",
    )
    process.env.HOLDFAST_TOKEN = 'from-env-0123456789ab'
    const fromEnv = await runCli(['env', '--home', home])
    expect(fromEnv.stdout).toContain(
      "export ANTHROPIC_CUSTOM_HEADERS='x-holdfast-token: from-env-0123456789ab'\n",
    )
    expect(fromEnv.stdout).not.toContain('from-file')
  })

  it('refuses a workspace name that is not a name, printing no exports', async () => {
    const home = homeServing('{}\n')
    const r = await runCli(['env', '--ws', '../x', '--home', home])
    expect(r.code).toBe(1)
    expect(r.stdout).toBe('')
    expect(r.stderr).toMatch(/^holdfast: .*workspace/)
  })

  it('says a server is not running, with the command that starts it, without writing holdfast.yaml', async () => {
    const home = tempHome()
    homes.push(home)
    const r = await runCli(['env', '--home', home])
    expect(r).toEqual({
      code: 1,
      stdout: '',
      stderr: `holdfast: holdfast serve is not running on ${home}; start it first (holdfast serve --home ${home})\n`,
    })
    expect(fs.readdirSync(home)).toEqual([])
  })
})
