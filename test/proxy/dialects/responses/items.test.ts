/**
 * proxy/dialects/responses/items: Responses input items as the prompt cache sees them, read
 * against a request Codex CLI 0.171.0 sent (test/fixtures/codex). Rules: a string `input` is one
 * user message and a non-array one is no items; a message is `type: "message"` or untyped with a
 * role; the system part is the leading system/developer messages; a string content is one part
 * (`output_text` for the assistant, `input_text` otherwise); `id`, `status` and a part's
 * `prompt_cache_breakpoint` are dropped as bookkeeping, never anything else, and never in place.
 */
import fs from 'node:fs'
import path from 'node:path'
import type { Json, JsonObject } from '../../../../proxy/core/json'
import {
  asCached,
  headOf,
  inputItems,
  isMessage,
  isSystemItem,
  partsOf,
  systemEnd,
  userMessage,
} from '../../../../proxy/dialects/responses/items'

const FIXTURE = path.join(
  __dirname,
  '..',
  '..',
  '..',
  'fixtures',
  'codex',
  '0.171.0',
  'requests',
  '003-POST-v1-responses.json',
)
const codex = (): JsonObject => (JSON.parse(fs.readFileSync(FIXTURE, 'utf8')) as { body: JsonObject }).body

describe("Codex's input items", () => {
  const body = codex()
  const items = inputItems(body.input)

  it('takes the two leading developer messages as the system part', () => {
    expect(items).toBe(body.input)
    expect(items.map((i) => (i as JsonObject).type)).toEqual([
      'message',
      'message',
      'message',
      'message',
      'function_call',
      'function_call_output',
      'message',
      'message',
    ])
    expect(systemEnd(items)).toBe(2)
    expect(items.map((i) => isSystemItem(i))).toEqual([true, true, false, false, false, false, false, false])
  })

  it('caches every item without its id and status, keeping everything else', () => {
    const before = JSON.stringify(items)
    const cached = items.map((i) => asCached(i)) as JsonObject[]
    for (const [k, item] of cached.entries()) {
      expect(item).not.toHaveProperty('id')
      expect(item).not.toHaveProperty('status')
      const { id: _i, status: _s, ...rest } = items[k] as JsonObject
      expect(item).toEqual(rest)
    }
    expect(cached[4]).toEqual({
      type: 'function_call',
      name: 'exec_command',
      arguments: '{"cmd":"echo holdfast-marker"}',
      call_id: 'call_fake000001_0',
    })
    expect(JSON.stringify(items)).toBe(before) // nothing was changed in place
  })

  it('reads the head as the first user message’s parts', () => {
    const head = headOf(items[systemEnd(items)])
    expect(head).toEqual((items[2] as JsonObject).content)
  })
})

describe('input as items', () => {
  it('reads a string input as one user message with its string content kept', () => {
    expect(inputItems('hi')).toEqual([{ role: 'user', content: 'hi' }])
  })

  it.each<[Json | undefined]>([[undefined], [null], [3], [{ role: 'user', content: 'x' }]])(
    'reads %j as no items',
    (input) => {
      expect(inputItems(input)).toEqual([])
    },
  )

  it('builds a user message of one input_text part', () => {
    expect(userMessage('Go.')).toEqual({
      type: 'message',
      role: 'user',
      content: [{ type: 'input_text', text: 'Go.' }],
    })
    expect(isMessage(userMessage('Go.'))).toBe(true)
  })
})

describe('what is a message, and what is the system', () => {
  it.each<[Json | undefined, boolean, boolean]>([
    [{ type: 'message', role: 'developer', content: [] }, true, true],
    [{ role: 'system', content: 'S' }, true, true],
    [{ type: 'message', role: 'user', content: 'x' }, true, false],
    [{ role: 'assistant', content: 'x' }, true, false],
    [{ type: 'message' }, true, false],
    [{ type: 'function_call', role: 'system', name: 'f' }, false, false],
    [{ type: 'reasoning', summary: [] }, false, false],
    [{ content: 'no role, no type' }, false, false],
    ['a string', false, false],
    [undefined, false, false],
  ])('%j: message %s, system %s', (item, message, system) => {
    expect(isMessage(item)).toBe(message)
    expect(isSystemItem(item)).toBe(system)
  })

  it('ends the system part at the first item that is not a system or developer message', () => {
    const sys = { role: 'system', content: 'S' }
    const dev = { type: 'message', role: 'developer', content: 'D' }
    const user = { role: 'user', content: 'U' }
    expect(systemEnd([sys, dev, user, sys])).toBe(2)
    expect(systemEnd([user, sys])).toBe(0)
    expect(systemEnd([sys, dev])).toBe(2)
    expect(systemEnd([])).toBe(0)
    expect(systemEnd([{ type: 'function_call', role: 'system' }, sys])).toBe(0)
  })
})

describe('parts and cached items', () => {
  it('reads a string content as one part of the role’s kind', () => {
    expect(partsOf('hi', 'assistant')).toEqual([{ type: 'output_text', text: 'hi' }])
    expect(partsOf('hi', 'user')).toEqual([{ type: 'input_text', text: 'hi' }])
    expect(partsOf('hi', 'developer')).toEqual([{ type: 'input_text', text: 'hi' }])
    expect(partsOf('hi', undefined)).toEqual([{ type: 'input_text', text: 'hi' }])
    expect(partsOf(null, 'user')).toEqual([])
    expect(partsOf(undefined, 'user')).toEqual([])
  })

  it('drops only the breakpoint marker of a part, without touching the part it came from', () => {
    const marked = { type: 'input_text', text: 'x', prompt_cache_breakpoint: { ttl: '1h' } }
    const plain = { type: 'input_text', text: 'y' }
    const parts = partsOf([marked, plain, 'odd'], 'user')
    expect(parts).toEqual([{ type: 'input_text', text: 'x' }, plain, 'odd'])
    expect(parts[1]).toBe(plain)
    expect(marked.prompt_cache_breakpoint).toEqual({ ttl: '1h' })
  })

  it('caches an untyped message as a typed one with parts, so both spellings compare equal', () => {
    const untyped = { role: 'user', content: 'hi', id: 'msg_1' }
    const typed = {
      type: 'message',
      role: 'user',
      content: [{ type: 'input_text', text: 'hi' }],
      status: 'completed',
    }
    expect(asCached(untyped)).toEqual(asCached(typed))
    expect(asCached(untyped)).toEqual({
      type: 'message',
      role: 'user',
      content: [{ type: 'input_text', text: 'hi' }],
    })
  })

  it('leaves a value that is not an object as it is', () => {
    expect(asCached('x')).toBe('x')
    expect(asCached(null)).toBeNull()
  })

  it('reads the head of a message as its parts and of any other item as that item cached; none as undefined', () => {
    expect(headOf(undefined)).toBeUndefined()
    expect(headOf({ role: 'assistant', content: 'ok' })).toEqual([{ type: 'output_text', text: 'ok' }])
    expect(headOf({ type: 'function_call_output', id: 'fco_1', call_id: 'c', output: 'done' })).toEqual([
      { type: 'function_call_output', call_id: 'c', output: 'done' },
    ])
  })
})
