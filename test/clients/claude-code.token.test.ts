/**
 * The real Claude Code CLI (the version package.json pins) through a provider row that adds the
 * operator's key (`api_key_env`), against the fake upstream: configured by nothing but what
 * `holdfast env` exports (its MCP connection as `holdfast run` makes it), every request it sends
 * carries the home's token, is served, and reaches the provider with the operator's key and
 * never the token; the same CLI with a key of its own and no token is refused and reaches nothing.
 * Loopback only; a missing binary fails the suite (it never skips).
 */
import fs from 'node:fs'
import path from 'node:path'
import { envVars, keyRows } from '../../cli/env'
import { composeArgv } from '../../cli/run'
import { claudeBinary, claudeEnv, scriptedModel, startClaude, type StreamEvent } from '../support/claude-code'
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream'
import { git, startProxy, type Proxy } from '../support/harness'
import { tempDir } from '../proxy/tools/support'

jest.setTimeout(180_000)

const OPERATOR_KEY = 'sk-ant-operator-cc-token-test'
let fake: FakeUpstream
let p: Proxy
let dir: string

beforeAll(async () => {
  process.env.HF_CC_OPERATOR_KEY = OPERATOR_KEY
  dir = tempDir()
  fake = await startFakeUpstream({ answer: scriptedModel().answer })
  p = await startProxy({
    fake,
    config: {
      providers: {
        anthropic: {
          dialect: 'anthropic',
          base_url: fake.anthropicBaseUrl,
          api_key_env: 'HF_CC_OPERATOR_KEY',
        },
      },
    },
  })
})
afterAll(async () => {
  await p?.close()
  await fake?.close()
  if (dir) fs.rmSync(dir, { recursive: true, force: true })
  delete process.env.HF_CC_OPERATOR_KEY
})

/** One `-p` turn of Claude Code with `vars` over its isolated environment; the events of the turn. */
async function oneTurn(
  name: string,
  vars: Record<string, string>,
  args: string[] = [],
): Promise<StreamEvent[]> {
  const cwd = path.join(dir, name)
  fs.mkdirSync(cwd, { recursive: true })
  const claude = startClaude({
    bin: claudeBinary(),
    cwd,
    env: claudeEnv(path.join(dir, `${name}-home`), vars.ANTHROPIC_BASE_URL as string, vars),
    args,
  })
  try {
    return await claude.turn('Say hi.')
  } finally {
    await claude.close()
  }
}

describe("Claude Code through a row that adds the operator's key", () => {
  it("is served with holdfast env's exports alone; the provider sees the operator's key, never the token", async () => {
    const vars = envVars(p.url, 'cct', 'main', p.token, keyRows(p.server.ctx.config))
    expect(vars).toMatchObject({ ANTHROPIC_API_KEY: p.token })
    const base = vars.ANTHROPIC_BASE_URL as string
    const events = await oneTurn('with', vars, composeArgv(['claude'], base, p.token, true).slice(1))
    expect(events.at(-1)).toMatchObject({ type: 'result', subtype: 'success', is_error: false })
    const init = events.find((e) => e.type === 'system' && e.subtype === 'init') as
      { mcp_servers?: { name: string; status: string }[] } | undefined
    expect(init?.mcp_servers).toContainEqual({ name: 'holdfast', status: expect.any(String) })
    const sent = fake.received.filter((r) => r.url.startsWith('/v1/messages'))
    expect(sent.length).toBeGreaterThan(0)
    for (const r of fake.received) {
      expect(r.headers['x-api-key']).toBe(OPERATOR_KEY)
      expect(JSON.stringify(r.headers)).not.toContain(p.token)
    }
    await p.settled()
    expect(git(p.repo('cct'), 'log', '--format=%s', 'agents/main')).toMatch(/^step \d{3}/)
  })

  it('is refused with a key of its own and no token: nothing reaches the provider', async () => {
    fake.reset()
    // claudeEnv's own dummy key and no token. The refusal is a 403: Claude Code retries a 401 with
    // backoff for minutes, a 403 it shows at once (no retry setting here, as its user has none).
    const vars = envVars(p.url, 'cct', 'own', undefined)
    const t0 = Date.now()
    const events = await oneTurn('without', vars)
    expect(Date.now() - t0).toBeLessThan(60_000)
    // What the user reads: Claude Code's own words, then holdfast's sentence.
    expect(events.at(-1)).toMatchObject({
      type: 'result',
      is_error: true,
      api_error_status: 403,
      result: expect.stringContaining(`provider row "anthropic" adds the operator's key`),
    })
    expect(fake.received).toHaveLength(0)
  })
})
