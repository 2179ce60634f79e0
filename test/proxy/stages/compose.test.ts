/**
 * proxy/stages/compose, run in-process on a real home with real loaded-set files. Rules: with
 * nothing to change the composition is the client's own buffer; loaded tools are appended after
 * the client's own tools, in loaded-set order, in the dialect's tool format; a client's own tool
 * of the same presented name wins (and the change says so); a harness on holdfast's MCP endpoint
 * (it declares or announces `mcp__holdfast__…`) gets no loaded tool injected; a `prompt_cache_key: agent` row sets
 * `<ws>/<agent>` unless the client sent one; the route's fields are spliced in and its changes
 * come first; every byte outside the changed fields is the client's; an unreadable set is empty.
 */
import fs from 'node:fs'
import path from 'node:path'
import type { JsonObject } from '../../../proxy/core/json'
import type { LoadedEntry } from '../../../proxy/core/loaded-set'
import { anthropic, openai } from '../../../proxy/dialects'
import { compose } from '../../../proxy/stages/compose'
import { writeLoadedSet } from '../../../proxy/store/loaded-sets'
import { accepted, routeTo, type StageRun, stageContext } from './stages.support'

const WHO = { workspace: 'w', agent: 'main' }
const schema = { type: 'object', properties: { path: { type: 'string' } } }
const LOADED: LoadedEntry[] = [
  { client: 'fs', tool: { name: 'write', description: 'Writes a file.', input_schema: schema } },
  { client: 'fs', tool: { name: 'read', description: 'Reads a file.', input_schema: schema } },
]
/** A client body with its own spacing, a non-ASCII character and an escaped one: bytes a re-stringify would change. */
const MESSAGES = '[ {"role":"user",  "content":"caf\u00e9 \\u00e9t\u00e9"} ]'
const anthropicBody = (tools = '[{"name":"Bash","input_schema":{"type":"object"}}]') =>
  `{"model":"claude-sonnet-4-5", "max_tokens":1024,\n "messages":${MESSAGES},\n "tools":${tools}}`

let run: StageRun
beforeEach(() => {
  run = stageContext()
})
afterEach(() => run.close())

const load = (entries: LoadedEntry[], agent = 'main') => writeLoadedSet(run.home, 'w', agent, entries)
const parse = (b: Buffer) => JSON.parse(b.toString('utf8')) as JsonObject

describe('nothing to change', () => {
  it("sends the client's own buffer, parsed value and scan when nothing is loaded and the route sets nothing", () => {
    const request = accepted(anthropic, anthropicBody())
    const route = routeTo('anthropic')
    const c = compose(run.ctx, request, WHO, route)
    expect(c.bytes).toBe(request.raw)
    expect(c.parsed).toBe(request.parsed)
    expect(c.top).toBe(request.top)
    expect(c).toMatchObject({ changes: [], injected: [], harnessTools: [] })
    expect(c.changes).not.toBe(route.changes)
  })

  it('reads a loaded set that is not JSON as empty and sends the client’s buffer', () => {
    const file = path.join(run.home, 'loaded', 'w', 'main.json')
    fs.mkdirSync(path.dirname(file), { recursive: true })
    fs.writeFileSync(file, '[{"client": "fs", "tool": ')
    const request = accepted(anthropic, anthropicBody())
    expect(compose(run.ctx, request, WHO, routeTo('anthropic')).bytes).toBe(request.raw)
  })
})

describe('loaded tools', () => {
  it("appends them after the client's own tools, in loaded-set order, keeping every other byte", async () => {
    await load(LOADED)
    const request = accepted(anthropic, anthropicBody())
    const c = compose(run.ctx, request, WHO, routeTo('anthropic'))
    const sent = parse(c.bytes)
    expect(sent.tools).toEqual([
      { name: 'Bash', input_schema: { type: 'object' } },
      { name: 'fs_read', description: 'Reads a file.', input_schema: schema },
      { name: 'fs_write', description: 'Writes a file.', input_schema: schema },
    ])
    expect(c.parsed).toEqual(sent)
    expect(c.top).toBeUndefined()
    expect(c.injected).toEqual(['fs_read', 'fs_write'])
    expect(c.changes).toEqual([{ field: 'tools', why: 'appended loaded tools: fs_read, fs_write' }])
    const text = c.bytes.toString('utf8')
    expect(
      text.startsWith(
        '{"model":"claude-sonnet-4-5", "max_tokens":1024,\n "messages":' + MESSAGES + ',\n "tools":',
      ),
    ).toBe(true)
    expect(request.raw.toString('utf8')).toBe(anthropicBody()) // the client's buffer is untouched
  })

  it('adds a tools field in the openai format when the client sent none', async () => {
    await load(LOADED.slice(1))
    const body = `{"model":"gpt-5","messages":${MESSAGES}}`
    const c = compose(run.ctx, accepted(openai, body), WHO, routeTo('openai'))
    expect(parse(c.bytes).tools).toEqual([
      { type: 'function', function: { name: 'fs_read', description: 'Reads a file.', parameters: schema } },
    ])
    expect(c.bytes.toString('utf8')).toContain(`"messages":${MESSAGES}`)
  })

  it("keeps the client's own tool of the same name over the loaded one, and says so", async () => {
    await load(LOADED)
    const own = '[{"name":"fs_read","description":"the client’s own","input_schema":{}}]'
    const c = compose(run.ctx, accepted(anthropic, anthropicBody(own)), WHO, routeTo('anthropic'))
    const tools = parse(c.bytes).tools as JsonObject[]
    expect(tools.map((t) => [t.name, t.description])).toEqual([
      ['fs_read', 'the client’s own'],
      ['fs_write', 'Writes a file.'],
    ])
    expect(c.injected).toEqual(['fs_write'])
    expect(c.changes).toEqual([
      { field: 'tools', why: 'appended loaded tools: fs_write' },
      { field: 'tools', why: "kept the client's own tool over the loaded one: fs_read" },
    ])
  })

  it("does not declare again a tool the harness declared through holdfast's MCP endpoint", async () => {
    await load(LOADED)
    const tools = JSON.stringify([
      { name: 'mcp__holdfast__fs_read', input_schema: {} },
      { name: 'mcp__hf__clients', input_schema: {} },
      { name: 'mcp__hf__fs_write', input_schema: {} },
    ])
    const request = accepted(anthropic, anthropicBody(tools))
    const c = compose(run.ctx, request, WHO, routeTo('anthropic'))
    expect(c.harnessTools).toEqual(['mcp__holdfast__fs_read', 'mcp__hf__fs_write'])
    expect(c.injected).toEqual([])
    expect(c.bytes).toBe(request.raw)
  })

  it("takes another MCP server's tool of the same name for the harness's only when that server has a clients tool", async () => {
    await load(LOADED.slice(0, 1))
    const tools = JSON.stringify([{ name: 'mcp__other__fs_write', input_schema: {} }])
    const c = compose(run.ctx, accepted(anthropic, anthropicBody(tools)), WHO, routeTo('anthropic'))
    expect(c.harnessTools).toEqual([])
    expect(c.injected).toEqual(['fs_write'])
  })

  it('injects nothing for a harness on the MCP endpoint, not even a tool it has not listed again yet', async () => {
    await load(LOADED)
    const tools = JSON.stringify([
      { name: 'Bash', input_schema: {} },
      { name: 'mcp__holdfast__clients', input_schema: {} },
      { name: 'mcp__holdfast__fs_read', input_schema: {} },
    ])
    const request = accepted(anthropic, anthropicBody(tools))
    const c = compose(run.ctx, request, WHO, routeTo('anthropic'))
    expect(c.injected).toEqual([])
    expect(c.harnessTools).toEqual(['mcp__holdfast__fs_read'])
    expect(c.changes).toEqual([])
    expect(c.bytes).toBe(request.raw)
  })

  it('counts the deferred tools a system entry announces as declared by the harness (Claude Code 2.1.332)', async () => {
    await load(LOADED)
    const announce = [
      'The following deferred tools are now available via ToolSearch:',
      'WebFetch',
      'mcp__holdfast__clients',
      'mcp__holdfast__fs_write',
    ].join('\n')
    const body = JSON.stringify({
      model: 'claude-opus-5-5',
      max_tokens: 1024,
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'system', content: [{ type: 'text', text: announce }] },
      ],
      tools: [{ name: 'ToolSearch', input_schema: {} }],
    })
    const request = accepted(anthropic, body)
    const c = compose(run.ctx, request, WHO, routeTo('anthropic'))
    expect(c.injected).toEqual([])
    expect(c.harnessTools).toEqual(['mcp__holdfast__fs_write'])
    expect(c.bytes).toBe(request.raw)
  })

  it("reads the addressed agent's set only", async () => {
    await load(LOADED, 'other')
    const request = accepted(anthropic, anthropicBody())
    expect(compose(run.ctx, request, WHO, routeTo('anthropic')).bytes).toBe(request.raw)
  })
})

describe('the route and the row', () => {
  it('splices in the route’s fields, its changes first, then compose’s', async () => {
    await load(LOADED.slice(1))
    const route = routeTo('anthropic', { model: 'claude-opus-4-1', max_tokens: 2048 }, [
      { field: 'model', why: 'role "big" (x-holdfast-role) uses claude-opus-4-1' },
    ])
    const c = compose(run.ctx, accepted(anthropic, anthropicBody()), WHO, route)
    const sent = parse(c.bytes)
    expect(sent.model).toBe('claude-opus-4-1')
    expect(sent.max_tokens).toBe(2048)
    expect(c.parsed.model).toBe('claude-opus-4-1')
    expect(c.changes.map((ch) => ch.field)).toEqual(['model', 'tools'])
    expect(c.bytes.toString('utf8')).toContain(`"messages":${MESSAGES}`)
  })

  it('sets prompt_cache_key to <ws>/<agent> on a row that asks for it, unless the client sent one', () => {
    const body = `{"model":"gpt-5","messages":${MESSAGES}}`
    const keyed = compose(run.ctx, accepted(openai, body), WHO, routeTo('keyed'))
    expect(parse(keyed.bytes).prompt_cache_key).toBe('w/main')
    expect(keyed.changes).toEqual([
      { field: 'prompt_cache_key', why: 'provider row "keyed" sets it per agent' },
    ])

    const own = accepted(openai, `{"model":"gpt-5","prompt_cache_key":"mine","messages":[]}`)
    expect(compose(run.ctx, own, WHO, routeTo('keyed')).bytes).toBe(own.raw)
    const plainRow = accepted(openai, body)
    expect(compose(run.ctx, plainRow, WHO, routeTo('openai')).bytes).toBe(plainRow.raw)
  })
})
