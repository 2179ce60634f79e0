/**
 * A provider row that adds the operator's key (`api_key_env`) serves only requests that carry the
 * home's token (DESIGN §4, fourth round), driven by the real SDKs against the fake upstream: the
 * token as the SDK's own key (x-api-key, Authorization: Bearer) or in x-holdfast-token is replaced
 * by the operator's key upstream and never written; without it every endpoint of the row (recorded,
 * count_tokens, pass-through, a plugin's route) refuses with 403 ROW_TOKEN_REQUIRED in the dialect's
 * envelope and sends and writes nothing. A row without `api_key_env` serves a client's own key
 * without any token, and the token sent there as a key is taken out rather than passed on.
 */
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import type { AnyPlugin } from '../../../plugins/instance'
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream'
import { git, startProxy, type Proxy } from '../../support/harness'
import { allFileBytes, listTree, postAnthropic, postOpenai, rawRequest } from '../../support/raw-http'

const KEY = 'sk-ant-operator-key-5b8e2d4c1a'
const CLIENT_KEY = 'sk-client-own-key-9d7c3b1e'
const HELLO = '{"model":"claude-fake-1","max_tokens":16,"messages":[{"role":"user","content":"hi"}]}'
const HELLO_OAI = '{"model":"gpt-fake-1","messages":[{"role":"user","content":"hi"}]}'
const EMBEDDINGS = '/v1/embeddings'

/** Moves a request to the row named in its `x-test-row` header (a plugin's route). */
const router: AnyPlugin = {
  name: 'router',
  apiVersion: 1,
  setup: () => ({
    route: (ex) => {
      const row = ex.headers['x-test-row']
      return row ? { provider: row, why: 'asked' } : undefined
    },
  }),
}

let fake: FakeUpstream
/** Both default rows add the operator's key; `plain` is a row that does not. */
let keyed: Proxy
/** The default rows take their key from a variable that is not set. */
let unset: Proxy
/** The default rows pass the client's key through; `keyed` is a row that adds the operator's. */
let plain: Proxy

beforeAll(async () => {
  process.env.HF_ROWS_KEY = KEY
  delete process.env.HF_ROWS_UNSET
  fake = await startFakeUpstream()
  const rows = (env: string) => ({
    anthropic: { dialect: 'anthropic' as const, base_url: fake.anthropicBaseUrl, api_key_env: env },
    openai: { dialect: 'openai' as const, base_url: fake.openaiBaseUrl, api_key_env: env },
  })
  ;[keyed, unset, plain] = await Promise.all([
    startProxy({ fake, config: { providers: rows('HF_ROWS_KEY') } }),
    startProxy({ fake, config: { providers: rows('HF_ROWS_UNSET') } }),
    startProxy({
      fake,
      config: {
        plugins: ['router'],
        providers: { keyed: { ...rows('HF_ROWS_KEY').anthropic } },
      },
      plugins: { router },
    }),
  ])
})
afterAll(async () => {
  await Promise.all([keyed, unset, plain].map((q) => q?.close()))
  await fake.close()
  delete process.env.HF_ROWS_KEY
})
beforeEach(() => fake.reset())

/** Every key and auth header the provider received, per request. */
const keysAtFake = (): { key?: string; auth?: string }[] =>
  fake.received.map((r) => ({
    ...(r.headers['x-api-key'] ? { key: String(r.headers['x-api-key']) } : {}),
    ...(r.headers.authorization ? { auth: String(r.headers.authorization) } : {}),
  }))

async function expectTokenNowhere(q: Proxy): Promise<void> {
  await q.settled()
  expect(JSON.stringify(fake.received.map((r) => r.headers))).not.toContain(q.token)
  const records = allFileBytes(`${q.home}/workspaces`)
  expect([records.includes(q.token), records.includes(KEY), records.includes(CLIENT_KEY)]).toEqual([
    false,
    false,
    false,
  ])
}

describe("a row that adds the operator's key, with the token", () => {
  it('serves the Anthropic SDK whose apiKey is the token; the provider sees the operator key', async () => {
    const client = new Anthropic({ baseURL: `${keyed.url}/w/rows/a/sdk`, apiKey: keyed.token, maxRetries: 0 })
    const msg = await client.messages.create({
      model: 'claude-fake-1',
      max_tokens: 8,
      messages: [{ role: 'user', content: 'hi' }],
    })
    expect(msg.type).toBe('message')
    const counted = await client.messages.countTokens({
      model: 'claude-fake-1',
      messages: [{ role: 'user', content: 'hi' }],
    })
    expect(counted.input_tokens).toBeGreaterThan(0)
    const models = await client.models.list()
    expect(models.data.length).toBeGreaterThan(0)
    expect(fake.received.map((r) => r.url)).toEqual([
      '/v1/messages',
      '/v1/messages/count_tokens',
      expect.stringMatching(/^\/v1\/models/),
    ])
    expect(keysAtFake()).toEqual([{ key: KEY }, { key: KEY }, { key: KEY }])
    await expectTokenNowhere(keyed)
    expect(git(keyed.repo('rows'), 'log', '--format=%s', 'agents/sdk')).toMatch(/^step 001/)
  })

  it('serves the Anthropic SDK whose authToken is the token (ANTHROPIC_AUTH_TOKEN)', async () => {
    const client = new Anthropic({
      baseURL: `${keyed.url}/w/rows/a/bearer`,
      authToken: keyed.token,
      maxRetries: 0,
    })
    await client.messages.create({
      model: 'claude-fake-1',
      max_tokens: 8,
      messages: [{ role: 'user', content: 'hi' }],
    })
    expect(keysAtFake()).toEqual([{ key: KEY }])
    await expectTokenNowhere(keyed)
  })

  it('serves the OpenAI SDK whose apiKey is the token, on chat, responses and a pass-through path', async () => {
    const client = new OpenAI({ baseURL: `${keyed.url}/w/rows/a/oai/v1`, apiKey: keyed.token, maxRetries: 0 })
    await client.chat.completions.create({ model: 'gpt-fake-1', messages: [{ role: 'user', content: 'hi' }] })
    await client.responses.create({ model: 'gpt-fake-1', input: 'hi' })
    const list = await client.models.list()
    expect(list.data.map((m) => m.id)).toEqual(['gpt-fake-1', 'gpt-fake-2'])
    expect(fake.received.map((r) => r.url)).toEqual(['/v1/chat/completions', '/v1/responses', '/v1/models'])
    expect(keysAtFake()).toEqual([
      { auth: `Bearer ${KEY}` },
      { auth: `Bearer ${KEY}` },
      { auth: `Bearer ${KEY}` },
    ])
    await expectTokenNowhere(keyed)
  })

  it('serves a request with the token in x-holdfast-token and a key of its own, replacing that key', async () => {
    const r = await postAnthropic(keyed.url, '/w/rows/a/header/v1/messages', HELLO, {
      'x-api-key': CLIENT_KEY,
      'x-holdfast-token': keyed.token,
    })
    expect(r.status).toBe(200)
    expect(keysAtFake()).toEqual([{ key: KEY }])
    await expectTokenNowhere(keyed)
  })

  it('serves a pass-through request that asks for 100-continue', async () => {
    fake.enqueue({ path: EMBEDDINGS, body: '{"object":"list","data":[]}' })
    const r = await rawRequest(keyed.url, {
      path: EMBEDDINGS,
      body: '{"model":"text-embedding-3-small","input":"hi"}',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${keyed.token}`,
        expect: '100-continue',
      },
    })
    expect(r.status).toBe(200)
    expect(keysAtFake()).toEqual([{ auth: `Bearer ${KEY}` }])
    expect(fake.received[0]?.headers.expect).toBeUndefined()
  })
})

describe("a row that adds the operator's key, without the token", () => {
  it('refuses the SDKs with their own keys: PermissionDeniedError, ROW_TOKEN_REQUIRED, nothing sent or written', async () => {
    await keyed.settled()
    const before = listTree(keyed.home)
    const anthropic = new Anthropic({
      baseURL: `${keyed.url}/w/rows/a/own`,
      apiKey: CLIENT_KEY,
      maxRetries: 0,
    })
    const refused = await anthropic.messages
      .create({ model: 'claude-fake-1', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(Anthropic.PermissionDeniedError)
    const e = refused as InstanceType<typeof Anthropic.PermissionDeniedError>
    expect([e.status, e.headers?.get('x-holdfast-error')]).toEqual([403, 'ROW_TOKEN_REQUIRED'])
    expect(e.error).toEqual({
      type: 'error',
      error: {
        type: 'permission_error',
        message: expect.stringMatching(/^provider row "anthropic" adds the operator's key \(\$HF_ROWS_KEY\)/),
      },
    })
    await expect(
      anthropic.messages.countTokens({ model: 'claude-fake-1', messages: [{ role: 'user', content: 'hi' }] }),
    ).rejects.toBeInstanceOf(Anthropic.PermissionDeniedError)
    await expect(anthropic.models.list()).rejects.toBeInstanceOf(Anthropic.PermissionDeniedError)
    const openai = new OpenAI({ baseURL: `${keyed.url}/w/rows/a/own/v1`, apiKey: CLIENT_KEY, maxRetries: 0 })
    await expect(
      openai.chat.completions.create({ model: 'gpt-fake-1', messages: [{ role: 'user', content: 'hi' }] }),
    ).rejects.toBeInstanceOf(OpenAI.PermissionDeniedError)
    await expect(openai.responses.create({ model: 'gpt-fake-1', input: 'hi' })).rejects.toBeInstanceOf(
      OpenAI.PermissionDeniedError,
    )
    await expect(openai.models.list()).rejects.toBeInstanceOf(OpenAI.PermissionDeniedError)
    await keyed.settled()
    expect(fake.received).toHaveLength(0)
    expect(listTree(keyed.home)).toEqual(before)
  })

  it('refuses every near miss of the token, on the recorded and the pass-through path', async () => {
    const t = keyed.token
    const misses: Record<string, string>[] = [
      {},
      { 'x-api-key': t.slice(0, -1) },
      { 'x-api-key': `${t}x` },
      { 'x-api-key': t.toUpperCase() },
      { 'x-api-key': '', authorization: `Basic ${t}` },
      { 'x-api-key': '', authorization: t },
      { 'x-holdfast-token': t.slice(1) },
      { 'x-holdfast-agent': t },
      { 'x-goog-api-key': t },
    ]
    for (const h of misses) {
      const step = await postAnthropic(keyed.url, '/v1/messages', HELLO, h)
      const models = await rawRequest(keyed.url, { method: 'GET', path: '/v1/models', headers: h })
      expect([JSON.stringify(h), step.status, step.headers['x-holdfast-error'], models.status]).toEqual([
        JSON.stringify(h),
        403,
        'ROW_TOKEN_REQUIRED',
        403,
      ])
    }
    const oai = await postOpenai(keyed.url, '/v1/chat/completions', HELLO_OAI)
    expect(JSON.parse(oai.body.toString())).toEqual({
      error: {
        message: expect.stringContaining('x-holdfast-token'),
        type: 'permission_error',
        param: null,
        code: null,
      },
    })
    expect(fake.received).toHaveLength(0)
  })

  it("refuses before saying the operator's variable is unset, and with the token says that (500)", async () => {
    const before = listTree(unset.home)
    const without = await postAnthropic(unset.url, '/v1/messages', HELLO)
    expect([without.status, without.headers['x-holdfast-error']]).toEqual([403, 'ROW_TOKEN_REQUIRED'])
    const a = await postAnthropic(unset.url, '/v1/messages', HELLO, { 'x-api-key': unset.token })
    expect([a.status, a.headers['x-holdfast-error']]).toEqual([500, 'PROVIDER_KEY_MISSING'])
    expect(a.body.toString()).toContain('$HF_ROWS_UNSET')
    const models = await rawRequest(unset.url, {
      method: 'GET',
      path: '/v1/models',
      headers: { authorization: `Bearer ${unset.token}` },
    })
    expect([models.status, models.headers['x-holdfast-error']]).toEqual([500, 'PROVIDER_KEY_MISSING'])
    await unset.settled()
    expect(fake.received).toHaveLength(0)
    expect(listTree(unset.home)).toEqual(before)
  })
})

describe('a row that passes the client key through', () => {
  it('serves a client key of its own on loopback without any token', async () => {
    const client = new Anthropic({ baseURL: `${plain.url}/w/rows/a/own`, apiKey: CLIENT_KEY, maxRetries: 0 })
    await client.messages.create({
      model: 'claude-fake-1',
      max_tokens: 8,
      messages: [{ role: 'user', content: 'hi' }],
    })
    // In whichever header this SDK puts its key (1.16: Authorization: Bearer), unchanged.
    expect(keysAtFake().map((k) => Object.values(k))).toEqual([[expect.stringContaining(CLIENT_KEY)]])
  })

  it('never passes the token on as a key: taken out, the rest forwarded as sent', async () => {
    const r = await postAnthropic(plain.url, '/w/rows/a/mixed/v1/messages', HELLO, {
      'x-api-key': CLIENT_KEY,
      authorization: `Bearer ${plain.token}`,
    })
    expect(r.status).toBe(200)
    const alone = await postAnthropic(plain.url, '/w/rows/a/mixed/v1/messages', HELLO, {
      'x-api-key': plain.token,
    })
    expect(alone.status).toBe(200) // the fake asks for no key; a provider would answer 401 itself
    expect(keysAtFake()).toEqual([{ key: CLIENT_KEY }, {}])
    await expectTokenNowhere(plain)
  })

  it("refuses a plugin's route to a row that adds the operator's key without the token, and serves it with", async () => {
    const without = await postAnthropic(plain.url, '/w/rows/a/routed/v1/messages', HELLO, {
      'x-test-row': 'keyed',
    })
    expect([without.status, without.headers['x-holdfast-error']]).toEqual([403, 'ROW_TOKEN_REQUIRED'])
    expect(JSON.parse(without.body.toString()).error.message).toMatch(/^provider row "keyed" adds/)
    const withToken = await postAnthropic(plain.url, '/w/rows/a/routed/v1/messages', HELLO, {
      'x-test-row': 'keyed',
      'x-holdfast-token': plain.token,
    })
    expect(withToken.status).toBe(200)
    expect(keysAtFake()).toEqual([{ key: KEY }])
  })
})
