/**
 * cli/env beyond what test/cli/program.commands.test.ts covers: the token as a header export
 * (`HOLDFAST_TOKEN` over holdfast.yaml's, then the home's `<home>/token`), and as the client's own
 * key only for a default row that adds the operator's key — where the real SDKs, configured by
 * nothing but these exports, get through; shell quoting, names escaped in the path, holdfast.yaml's
 * default agent and workspace filling in the one not given, a bad name refused, and a server that
 * is not running said without reading (or writing) holdfast.yaml.
 */
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import fs from 'node:fs'
import path from 'node:path'
import { envLines, envVars, keyRows } from '../../cli/env'
import { parseConfig } from '../../proxy/store/config'
import { startFakeUpstream } from '../support/fake-upstream'
import { ROOT, startProxy, tempHome } from '../support/harness'
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

  it("adds the token as the client's key only for the dialects whose default row adds the operator's key", () => {
    expect(envVars(URL, undefined, undefined, 'tok', { anthropic: true })).toMatchObject({
      ANTHROPIC_API_KEY: 'tok',
      ANTHROPIC_CUSTOM_HEADERS: 'x-holdfast-token: tok',
    })
    expect(envVars(URL, undefined, undefined, 'tok', { anthropic: true })).not.toHaveProperty(
      'OPENAI_API_KEY',
    )
    expect(envVars(URL, undefined, undefined, 'tok', { openai: true })).toMatchObject({
      OPENAI_API_KEY: 'tok',
    })
    expect(envVars(URL, undefined, undefined, 'tok', { openai: true })).not.toHaveProperty(
      'ANTHROPIC_API_KEY',
    )
    expect(envVars(URL, undefined, undefined, undefined, { anthropic: true, openai: true })).toEqual({
      ANTHROPIC_BASE_URL: URL,
      OPENAI_BASE_URL: `${URL}/v1`,
      CLAUDE_CODE_GATEWAY_HINT_HEADERS: '1',
    })
  })

  it("reads which default rows add the operator's key from holdfast.yaml", () => {
    const rows = (yaml: string) => keyRows(parseConfig(yaml, 'holdfast.yaml'))
    expect(rows('{}')).toEqual({ anthropic: false, openai: false })
    expect(
      rows(
        'providers: {anthropic: {dialect: anthropic, base_url: "http://x", api_key_env: K}, other: {dialect: openai, base_url: "http://y", api_key_env: K}}',
      ),
    ).toEqual({ anthropic: true, openai: false })
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

  it("exports the home's token file when no token is configured", async () => {
    const home = homeServing('{}\n')
    fs.writeFileSync(path.join(home, 'token'), 'the-home-token-0123456789\n', { mode: 0o600 })
    const r = await runCli(['env', '--home', home])
    expect(r.stdout).toContain(
      "export ANTHROPIC_CUSTOM_HEADERS='x-holdfast-token: the-home-token-0123456789'\n",
    )
    expect(r.stdout).not.toContain('API_KEY')
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

describe("the exports, through a row that adds the operator's key", () => {
  it('are all the real SDKs need: their requests carry the token, the provider sees the operator key', async () => {
    process.env.HF_ENV_OPERATOR_KEY = 'sk-operator-env-test-1'
    const fake = await startFakeUpstream()
    const p = await startProxy({
      fake,
      config: {
        providers: {
          anthropic: {
            dialect: 'anthropic',
            base_url: fake.anthropicBaseUrl,
            api_key_env: 'HF_ENV_OPERATOR_KEY',
          },
          openai: { dialect: 'openai', base_url: fake.openaiBaseUrl, api_key_env: 'HF_ENV_OPERATOR_KEY' },
        },
      },
    })
    try {
      const r = await runCli(['env', '--ws', 'envws', '--agent', 'sdk', '--home', p.home])
      expect(r.code).toBe(0)
      const vars = Object.fromEntries(
        r.stdout
          .trim()
          .split('\n')
          .map((l) => /^export (\w+)=(.*)$/.exec(l) as RegExpExecArray)
          .map((m) => [m[1], m[2]?.replace(/^'(.*)'$/, '$1')]),
      ) as Record<string, string>
      expect(vars).toMatchObject({ ANTHROPIC_API_KEY: p.token, OPENAI_API_KEY: p.token })
      // A shell with keys of its own: the exports win, as they do after eval.
      const env = {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        ANTHROPIC_AUTH_TOKEN: 'sk-users-own',
        ...vars,
      }
      const script = `
        const Anthropic = require('@anthropic-ai/sdk').default
        const OpenAI = require('openai').default
        ;(async () => {
          await new Anthropic({ maxRetries: 0 }).messages.create({ model: 'claude-fake-1', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] })
          await new OpenAI({ maxRetries: 0 }).chat.completions.create({ model: 'gpt-fake-1', messages: [{ role: 'user', content: 'hi' }] })
          console.log('ok')
        })().catch((e) => { console.error(String(e)); process.exit(1) })`
      // Asynchronously: the proxy answering it runs in this process.
      const run = await promisify(execFile)(process.execPath, ['-e', script], {
        cwd: ROOT,
        env,
        timeout: 30_000,
      })
      expect(run.stdout).toBe('ok\n')
      expect(p.fake.received.map((x) => [x.url, x.headers['x-api-key'] ?? x.headers.authorization])).toEqual([
        ['/v1/messages', expect.stringContaining('sk-operator-env-test-1')],
        ['/v1/chat/completions', 'Bearer sk-operator-env-test-1'],
      ])
      await p.settled()
    } finally {
      await p.close()
      await fake.close()
      delete process.env.HF_ENV_OPERATOR_KEY
    }
  })
})
