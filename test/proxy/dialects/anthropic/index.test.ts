/**
 * proxy/dialects/anthropic (the request side of the Messages dialect), read against the requests
 * Claude Code 2.1.197 and 2.1.332 actually sent (test/fixtures/claude-code). Rules: every captured
 * request passes the shape check and a field the proxy reads with the wrong type is named by its
 * path; the transcript is every message (a mid-conversation `system` message included, so an
 * index there is an index in `messages`); a string `system`/content is one text block; only
 * `anthropic-beta` keys the cache among headers; markers are counted wherever Anthropic accepts
 * them; rows put the path after the base URL and send the key as `x-api-key`. (Facets, tool
 * format, tool names, breakpoints on hand-made bodies and the error envelope: dialects/index.test.)
 */
import fs from 'node:fs'
import path from 'node:path'
import type { JsonObject } from '../../../../proxy/core/json'
import { anthropic, anthropicRows, asBlocks, headOf } from '../../../../proxy/dialects/anthropic'

const FIXTURES = path.join(__dirname, '..', '..', '..', 'fixtures', 'claude-code')
interface Captured {
  path: string
  headers: Record<string, string>
  body: JsonObject
}
const captured = (version: string, kind: string, file: string): Captured =>
  JSON.parse(fs.readFileSync(path.join(FIXTURES, version, kind, file), 'utf8')) as Captured
const ALL = ['2.1.197', '2.1.332'].flatMap((v) =>
  ['plain', 'hints'].flatMap((k) =>
    fs.readdirSync(path.join(FIXTURES, v, k)).map((f) => [`${v}/${k}/${f}`, captured(v, k, f)] as const),
  ),
)

describe('shape check', () => {
  it.each(ALL)('accepts the request Claude Code sent (%s)', (_name, c) => {
    expect(anthropic.checkShape(c.body)).toBeUndefined()
  })

  it.each<[object, string]>([
    [{ model: 4 }, 'model must be a string'],
    [{ messages: { role: 'user' } }, 'messages must be an array of message objects'],
    [
      { messages: [{ role: 'user', content: 5 }] },
      'messages[0].content must be a string or an array of content blocks',
    ],
    [
      { messages: [{ role: 'user', content: [{ type: 'text', text: ['x'] }] }] },
      'messages[0].content[0].text must be a string',
    ],
    [
      { messages: [{ role: 'user', content: [{ type: 'text', text: 'x', cache_control: 'ephemeral' }] }] },
      'messages[0].content[0].cache_control must be an object',
    ],
    [{ system: 3 }, 'system must be a string or an array of text blocks'],
    [{ system: [{ type: 'text', text: 1 }] }, 'system[0].text must be a string'],
    [{ tools: [{ name: 'Read' }, { description: 'no name' }] }, 'tools[1].name is required'],
    [{ tools: [{ name: 'Read', cache_control: true }] }, 'tools[0].cache_control must be an object'],
    [{ tool_choice: 'auto' }, 'tool_choice must be an object'],
    [{ thinking: true }, 'thinking must be an object'],
    [{ stream: 'true' }, 'stream must be true or false'],
    [{ max_tokens: '64000' }, 'max_tokens must be a number'],
    [{ metadata: 'x' }, 'metadata must be an object'],
    [{ cache_control: [] }, 'cache_control must be an object'],
  ])('refuses %j naming the field: %s', (body, want) => {
    expect(anthropic.checkShape(body as JsonObject)).toBe(want)
  })

  it('never checks a field it does not read, nor inside a block it reads only the type of', () => {
    const body = {
      model: 'claude-x',
      context_management: 'anything',
      output_config: 7,
      messages: [
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 1, content: { odd: true } }] },
      ],
      tools: [{ name: 'Read', input_schema: 'not even a schema' }],
    }
    expect(anthropic.checkShape(body as unknown as JsonObject)).toBeUndefined()
  })
})

describe("the transcript of Claude Code's tool-result request", () => {
  const c = captured('2.1.197', 'plain', 'tool-result.json')
  const messages = c.body.messages as JsonObject[]

  it("is every message, the mid-conversation system message included, in the body's own order", () => {
    expect(anthropic.transcriptField).toBe('messages')
    expect(anthropic.messages(c.body)).toBe(messages)
    expect(anthropic.transcript(c.body)).toBe(messages)
    expect(anthropic.transcript(c.body).map((m) => anthropic.roleOf(m))).toEqual([
      'user',
      'system',
      'assistant',
      'user',
      'assistant',
      'user',
      'assistant',
      'user',
    ])
  })

  it('reads the system text as its text blocks joined by newlines', () => {
    const blocks = c.body.system as { text: string }[]
    const text = anthropic.systemText(c.body)
    expect(text).toBe(blocks.map((b) => b.text).join('\n'))
    expect(text.startsWith('x-anthropic-billing-header: cc_version=2.1.197')).toBe(true)
    expect(anthropic.systemText({ system: 'Be brief.' })).toBe('Be brief.')
    expect(anthropic.systemText({})).toBe('')
  })

  it("reads an entry's text from its text blocks only: a tool result or a tool call has none", () => {
    expect(anthropic.textOf(messages[1] as JsonObject)).toBe(messages[1]?.content)
    expect(anthropic.textOf(messages[2] as JsonObject)).toBe('') // tool_use
    expect(anthropic.textOf(messages[3] as JsonObject)).toBe('') // tool_result
    expect(anthropic.textOf('a bare string')).toBe('')
    expect(anthropic.roleOf({ content: 'x' })).toBeUndefined()
    expect(anthropic.roleOf({ role: 1 })).toBeUndefined()
  })

  it('lists the tools the assistant called and counts the markers exactly where the body carries them', () => {
    expect(anthropic.calledToolNames(c.body)).toEqual(['Agent', 'Bash'])
    for (const [, each] of ALL) {
      const markers = (JSON.stringify(each.body).match(/"cache_control"/g) ?? []).length
      expect(anthropic.breakpoints(each.body)).toBe(markers)
    }
  })

  it("reads the client's output limit from max_tokens only", () => {
    expect(anthropic.clientMaxTokens(c.body)).toBe(64000)
    expect(anthropic.clientMaxTokens({ max_completion_tokens: 5 })).toBeUndefined()
    expect(anthropic.maxTokensField).toBe('max_tokens')
    expect(anthropic.promptCacheKeyField).toBeUndefined()
  })
})

describe('facets of a captured request', () => {
  it('reads the system and the first message as sent, and the beta header as the keying header', () => {
    const c = captured('2.1.332', 'hints', 'main.json')
    const f = anthropic.facets(c.body, c.headers)
    expect(f.model).toBe(c.body.model)
    expect(f.system).toBe(c.body.system)
    expect(f.head).toBe((c.body.messages as JsonObject[])[0]?.content)
    expect(f.tools).toBe(c.body.tools)
    expect(f.keying['header:anthropic-beta']).toBe(c.headers['anthropic-beta'])
    expect(anthropic.keyingHeaders(c.headers)).toEqual({ 'anthropic-beta': c.headers['anthropic-beta'] })
  })
})

describe('keying headers', () => {
  it.each<[Record<string, string | string[] | undefined>, Record<string, string>]>([
    [{ 'anthropic-beta': 'a,b' }, { 'anthropic-beta': 'a,b' }],
    [{ 'anthropic-beta': ['first', 'second'] }, { 'anthropic-beta': 'first' }],
    [{ 'anthropic-version': '2023-06-01', 'x-api-key': 'k', 'user-agent': 'claude-cli' }, {}],
    [{ 'anthropic-beta': undefined }, {}],
    [{}, {}],
  ])('keys %j as %j', (headers, want) => {
    expect(anthropic.keyingHeaders(headers)).toEqual(want)
  })
})

describe('blocks', () => {
  it('reads a string as one text block and leaves anything else as given', () => {
    expect(asBlocks('hi')).toEqual([{ type: 'text', text: 'hi' }])
    const blocks = [{ type: 'text', text: 'hi' }]
    expect(asBlocks(blocks)).toBe(blocks)
    expect(asBlocks(undefined)).toBeUndefined()
    expect(asBlocks(null)).toBeNull()
  })

  it('reads the head of a message as blocks: no message → undefined, no or odd content → []', () => {
    expect(headOf(undefined)).toBeUndefined()
    expect(headOf({ role: 'user', content: 'hi' })).toEqual([{ type: 'text', text: 'hi' }])
    expect(headOf({ role: 'user' })).toEqual([])
    expect(headOf({ role: 'user', content: 5 })).toEqual([])
    expect(headOf('not a message')).toEqual([])
  })
})

describe('the anthropic rows', () => {
  it.each([
    [
      'https://api.anthropic.com',
      '/v1/messages?beta=true',
      'https://api.anthropic.com/v1/messages?beta=true',
    ],
    ['https://api.anthropic.com/', '/v1/messages', 'https://api.anthropic.com/v1/messages'],
    [
      'https://gw.example/anthropic//',
      '/v1/messages/count_tokens',
      'https://gw.example/anthropic/v1/messages/count_tokens',
    ],
    ['http://127.0.0.1:8080/base', '/v1/models', 'http://127.0.0.1:8080/base/v1/models'],
  ])('sends %s + %s to %s', (base, incoming, want) => {
    expect(anthropicRows.upstreamUrl(base, incoming).href).toBe(want)
  })

  it('sends a row key as x-api-key, prices as anthropic, and adds only anthropic-version itself', () => {
    expect(anthropic.rows).toBe(anthropicRows)
    expect(anthropicRows.authHeaders('sk-ant-1')).toEqual({ 'x-api-key': 'sk-ant-1' })
    expect(anthropicRows.priceProvider).toBe('anthropic')
    expect(anthropic.requiredHeaders).toEqual({ 'anthropic-version': '2023-06-01' })
    expect(anthropic.endpoint).toBe('/v1/messages')
    expect(anthropic.countTokensEndpoint).toBe('/v1/messages/count_tokens')
  })
})
