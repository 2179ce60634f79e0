/**
 * The exchange a plugin sees: a summary computed once from the parsed body (approximate tokens,
 * tool names, last user text, headers as recorded), and a view that refuses every write.
 */
import { execFileSync } from 'node:child_process'
import path from 'node:path'
import { exchange, summarize } from '../../plugins/exchange'
import type { JsonObject } from '../../proxy/core/json'
import { fixture } from './support'

describe('the exchange summary', () => {
  it('gives approximate tokens, tool names, the last user text and the headers as recorded', () => {
    const f = fixture('modelled/main')
    const ex = exchange({ body: f.body as never, headers: f.headers })
    const s = ex.summary
    expect(s.approxTokens).toBe(Math.ceil(Buffer.byteLength(JSON.stringify(f.body)) / 4))
    expect(s.toolNames).toEqual(['Task', 'Bash', 'Glob', 'Grep', 'Read', 'Edit', 'TodoWrite'])
    // The last user turn holds only a tool result: the text is the one before it.
    expect(s.lastUserText).toMatch(/\nwhy does the build fail on CI but not locally\?$/)
    expect(s.model).toBe('claude-sonnet-4-5-20250929')
    expect(s.maxTokens).toBe(32000)
    expect(s.stream).toBe(true)
    expect(s.messageCount).toBe(3)
    expect(s.systemChars).toBeGreaterThan(2000)
    expect(s.headers['user-agent']).toBe('claude-cli/2.1.90 (external, cli)')
    expect(s.headers['x-claude-code-session-id']).toBe('4f9d2c1e-8b7a-4c3d-9e2f-1a2b3c4d5e6f')
    expect(s.headers['x-api-key']).toBeUndefined()
    expect(ex.headers).toBe(s.headers)
  })

  it('takes the last user message that has text, skipping tool results', () => {
    const body = {
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'first' }] },
        { role: 'assistant', content: 'ok' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'second' },
            { type: 'text', text: 'part' },
          ],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'out' }] },
      ],
    }
    expect(exchange({ body }).summary.lastUserText).toBe('second\npart')
  })

  it('leaves base64 images and documents out of the approximate tokens', () => {
    const data = 'A'.repeat(40_000)
    const image = { type: 'image', source: { type: 'base64', media_type: 'image/png', data } }
    const body = { messages: [{ role: 'user', content: [image, { type: 'text', text: 'what is this' }] }] }
    const raw = Buffer.byteLength(JSON.stringify(body))
    expect(summarize('anthropic', body, raw, {}).approxTokens).toBe(Math.ceil((raw - data.length) / 4))
  })

  it('reads the openai system messages and max_completion_tokens', () => {
    const body = {
      model: 'gpt-5',
      max_completion_tokens: 99,
      tools: [{ type: 'function', function: { name: 'lookup', parameters: {} } }],
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'developer', content: [{ type: 'text', text: 'and kind' }] },
        { role: 'user', content: 'hi' },
      ],
    }
    const s = exchange({ body, dialect: 'openai' }).summary
    expect([s.systemChars, s.maxTokens, s.toolNames, s.lastUserText]).toEqual([16, 99, ['lookup'], 'hi'])
  })
})

describe('the exchange summary of a responses request', () => {
  it('reads instructions and developer items as the system, max_output_tokens, flat tools and input items', () => {
    const data = `data:image/png;base64,${'A'.repeat(40_000)}`
    const body: JsonObject = {
      model: 'gpt-5',
      instructions: 'be brief',
      max_output_tokens: 99,
      tools: [{ type: 'function', name: 'lookup', parameters: {} }, { type: 'web_search' }],
      input: [
        { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'and kind' }] },
        {
          role: 'user',
          content: [
            { type: 'input_image', image_url: data },
            { type: 'input_text', text: 'what is this' },
          ],
        },
        { type: 'function_call', name: 'lookup', call_id: 'c', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c', output: 'a cat' },
      ],
    }
    const raw = Buffer.byteLength(JSON.stringify(body))
    const s = summarize('responses', body, raw, {})
    expect([s.systemChars, s.maxTokens, s.toolNames, s.lastUserText, s.messageCount]).toEqual([
      16,
      99,
      ['lookup'],
      'what is this',
      4,
    ])
    expect(s.approxTokens).toBe(Math.ceil((raw - data.length) / 4))
    expect(summarize('responses', { input: 'hi' }, 15, {}).lastUserText).toBe('hi')
  })
})

describe('the exchange view', () => {
  it('refuses any write to the body, at any depth, and to the view itself', () => {
    const ex = exchange({ body: { model: 'm', messages: [{ role: 'user', content: 'hi' }], tools: [] } })
    const body = ex.body as unknown as Record<string, unknown> & {
      messages: { content: string }[]
      tools: unknown[]
    }
    expect(() => (body.model = 'other')).toThrow(/read-only/)
    expect(() => (body.messages[0]!.content = 'x')).toThrow(/read-only/)
    expect(() => body.tools.push({})).toThrow(/read-only/)
    expect(() => delete body.model).toThrow(/read-only/)
    expect(() => ((ex as { agent: string }).agent = 'x')).toThrow(TypeError)
    expect(JSON.parse(JSON.stringify(ex.body))).toEqual({
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
      tools: [],
    })
  })

  it('is frozen and holds every field as its own, the summary and headers read on first use', () => {
    const ex = exchange({ body: { model: 'm', messages: [] }, headers: { 'User-Agent': 'ua' } })
    expect(Object.isFrozen(ex)).toBe(true)
    expect(Object.keys(ex)).toEqual([
      'id',
      'dialect',
      'kind',
      'path',
      'workspace',
      'agent',
      'replay',
      'body',
      'route',
      'response',
      'summary',
      'headers',
    ])
    expect(ex.headers).toBe(ex.summary.headers)
    expect(JSON.parse(JSON.stringify(ex))).toMatchObject({ agent: 'main', headers: { 'user-agent': 'ua' } })
  })

  /** What `code` prints, run by a child node with `flags` (V8's, for what a test cannot ask here). */
  const inNode = (flags: string[], code: string): string => {
    const root = path.join(__dirname, '..', '..')
    return execFileSync(
      process.execPath,
      [...flags, '-r', path.join(root, 'scripts', 'register.js'), '-e', code],
      { cwd: root, encoding: 'utf8' },
    )
  }

  it('shares one hidden class among the views and summaries of different requests', () => {
    // Getters made per view (closures of an object literal) left no two views sharing a class, in
    // dictionary mode; with them a young collection freed nothing a view reached (the next test).
    const out = inNode(
      ['--allow-natives-syntax'],
      `const { exchange } = require('./plugins/exchange')
       const mk = (i) => exchange({ body: { model: 'm', messages: [{ role: 'user', content: 'hi ' + i }] }, headers: { 'user-agent': 'ua' } })
       const a = mk(1), b = mk(2)
       console.log(JSON.stringify([%HaveSameMap(a, b), %HaveSameMap(a.summary, b.summary), %HasFastProperties(a), %HasFastProperties(a.summary)]))`,
    )
    expect(JSON.parse(out)).toEqual([true, true, true, true])
  })

  it("lets a young collection free a request's body once its view is gone", () => {
    // 200 views of 50 KB bodies, read as a plugin reads them, then two young collections: the
    // bodies must not have been promoted to the old generation (with a module-wide WeakMap of the
    // proxies, or with the per-view getters, 10-11 MB of them were).
    const out = inNode(
      ['--expose-gc'],
      `const v8 = require('node:v8')
       const { exchange } = require('./plugins/exchange')
       const old = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'old_space').space_used_size
       gc()
       const before = old()
       for (let i = 0; i < 200; i++) {
         const ex = exchange({ body: { model: 'm', messages: [{ role: 'user', content: String(i).padEnd(50000, 'x') }] } })
         void ex.body.messages[0].content
         void ex.summary.lastUserText
       }
       gc({ type: 'minor' })
       gc({ type: 'minor' })
       console.log((old() - before) / 1e6)`,
    )
    expect(Number(out)).toBeLessThan(3)
  })
})
