/**
 * Roles through the proxy: a model or x-holdfast-role naming a role reaches that role's provider
 * row with its model, read at the agent's followed config at each step (an edit is followed from
 * the next step, no restart); refusals are 400s in the dialect's envelope; meta.json says which.
 */
import fs from 'node:fs'
import path from 'node:path'
import { setRole } from '../../../proxy/store/config/edit'
import { openRepo } from '../../../proxy/store/git'
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream'
import { git, startProxy, type Proxy } from '../../support/harness'

let p: Proxy
let second: FakeUpstream

beforeAll(async () => {
  second = await startFakeUpstream()
  p = await startProxy({
    config: {
      providers: {
        fast: { dialect: 'anthropic', base_url: second.anthropicBaseUrl },
        other: { dialect: 'openai', base_url: second.openaiBaseUrl },
      },
    },
  })
})
afterAll(async () => {
  await p.close()
  await second.close()
})
beforeEach(() => {
  p.fake.reset()
  second.reset()
})

const rows = () => JSON.parse(fs.readFileSync(path.join(p.home, 'holdfast.yaml'), 'utf8')).providers
async function post(agent: string, body: object, headers: Record<string, string> = {}) {
  const res = await fetch(`${p.url}/w/roles/a/${agent}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', ...headers },
    body: JSON.stringify(body),
  })
  return { status: res.status, json: (await res.json()) as Record<string, unknown> }
}
const ask = (model: string, extra: object = {}) => ({
  model,
  messages: [{ role: 'user', content: 'hi' }],
  ...extra,
})
const meta = (agent: string, n: string) =>
  JSON.parse(git(p.repo('roles'), 'show', `agents/${agent}:steps/${agent}/${n}/meta.json`))

describe('routing by role', () => {
  beforeAll(async () => {
    // The workspace exists after its first request; then declare roles on config/default.
    await post('setup', ask('claude-haiku-4-5', { max_tokens: 5 }))
    const repo = openRepo(p.repo('roles'))
    await setRole(
      repo,
      'default',
      'reviewer',
      { provider: 'fast', model: 'claude-haiku-4-5', max_output_tokens: 777 },
      rows(),
    )
    await setRole(repo, 'default', 'gptish', { provider: 'other', model: 'gpt-5' }, rows())
    await setRole(repo, 'default', 'ghost', { provider: 'anthropic', model: 'x' }, rows())
  })

  it("sends a request whose model names a role to the role's row with its model, and records it", async () => {
    const r = await post('r1', ask('reviewer'))
    expect(r.status).toBe(200)
    expect(p.fake.received).toHaveLength(0)
    const sent = JSON.parse(second.received[0]?.body.toString() ?? '{}')
    expect(sent).toMatchObject({ model: 'claude-haiku-4-5', max_tokens: 777 })
    await p.settled()
    const m = meta('r1', '001')
    expect(m.route).toMatchObject({ provider: 'fast', model: 'claude-haiku-4-5', role: 'reviewer' })
    expect(m.route.config_commit).toBe(git(p.repo('roles'), 'rev-parse', 'config/default').trim())
    expect(m.changes.map((c: { field: string }) => c.field)).toEqual(['model', 'max_tokens'])
  })

  it('keeps the max_tokens the client sent', async () => {
    await post('r2', ask('reviewer', { max_tokens: 12 }))
    expect(JSON.parse(second.received[0]?.body.toString() ?? '{}').max_tokens).toBe(12)
  })

  it('routes by x-holdfast-role first, and never forwards the header', async () => {
    await post('r3', ask('claude-sonnet-4-5', { max_tokens: 5 }), { 'x-holdfast-role': 'reviewer' })
    expect(second.received[0]?.headers['x-holdfast-role']).toBeUndefined()
    expect(JSON.parse(second.received[0]?.body.toString() ?? '{}').model).toBe('claude-haiku-4-5')
  })

  it('answers 400 listing the declared roles for an undeclared x-holdfast-role, sending nothing', async () => {
    const r = await post('r4', ask('m', { max_tokens: 5 }), { 'x-holdfast-role': 'critic' })
    expect(r.status).toBe(400)
    expect(r.json).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } })
    expect(JSON.stringify(r.json)).toContain('declared roles: ghost, gptish, reviewer')
    expect(p.fake.received.length + second.received.length).toBe(0)
  })

  it('answers 400 when the role speaks another dialect than the endpoint', async () => {
    const r = await post('r5', ask('gptish', { max_tokens: 5 }))
    expect(r.status).toBe(400)
    expect(JSON.stringify(r.json)).toContain('speaks openai')
  })

  it('answers 400 naming role and row when the row is not in holdfast.yaml', async () => {
    // ghost names the row "anthropic", which exists; remove it from the running config to simulate a missing row.
    const saved = p.server.ctx.config.providers.anthropic
    delete p.server.ctx.config.providers.anthropic
    try {
      const r = await post('r6', ask('ghost', { max_tokens: 5 }))
      expect(r.status).toBe(400)
      expect(JSON.stringify(r.json)).toMatch(/role \\"ghost\\" routes to provider row \\"anthropic\\"/)
    } finally {
      p.server.ctx.config.providers.anthropic = saved!
    }
  })

  it('follows a config edit from the next step, without a restart', async () => {
    await post('r7', ask('reviewer', { max_tokens: 5 }))
    await setRole(
      openRepo(p.repo('roles')),
      'default',
      'reviewer',
      { provider: 'fast', model: 'claude-opus-4-5' },
      rows(),
    )
    await post('r7', ask('reviewer', { max_tokens: 5 }))
    const models = second.received.map((r) => JSON.parse(r.body.toString()).model)
    expect(models).toEqual(['claude-haiku-4-5', 'claude-opus-4-5'])
    await p.settled()
    expect(meta('r7', '001').route.config_commit).not.toBe(meta('r7', '002').route.config_commit)
  })
})
