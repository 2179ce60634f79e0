import { isDeepStrictEqual } from 'node:util'
import { hold, type PreviousStep } from '../../../proxy/core/hold'
import { factsOf, readOnFacts, readWhole, type ReadFacts } from '../../../proxy/core/incremental'
import type { Json, JsonObject } from '../../../proxy/core/json'
import { applyEdits, jsonBytes } from '../../../proxy/core/splice'
import { scanTopLevel, type ScannedTop } from '../../../proxy/core/json-scan'
import type { Dialect } from '../../../proxy/core/dialect'
import { DIALECTS, anthropic } from '../../../proxy/dialects'
import { Conversation } from '../../support/conversation'
import { rng } from '../../support/fuzz'

/** The two readings agree: value, scan and transcript entries. */
function expectSame(fast: ReadFacts, whole: ReadFacts): void {
  expect(isDeepStrictEqual(fast.parsed, whole.parsed)).toBe(true)
  expect(Object.keys(fast.parsed)).toEqual(Object.keys(whole.parsed))
  expect([...fast.top.keys]).toEqual([...whole.top.keys])
  expect([fast.top.open, fast.top.close]).toEqual([whole.top.open, whole.top.close])
  expect(fast.entries).toEqual(whole.entries)
}

const NOW = Date.UTC(2026, 11, 8, 12)

/** What the hold makes of `next` after `prev` (the stage after accept), from a reading of `next`. */
function held(dialect: Dialect, prev: ReadFacts, next: ReadFacts): { body: Buffer; verdict: unknown } {
  const previous: PreviousStep = {
    path: 'prev',
    bytes: prev.bytes,
    parsed: prev.parsed,
    top: prev.top,
    sentAt: NOW - 1000,
    headers: {},
  }
  return hold(
    dialect,
    previous,
    { bytes: next.bytes, parsed: next.parsed, top: next.top, headers: {} },
    { now: NOW },
  )
}

/** A transcript entry of the dialect, with `size` bytes of text. */
function entry(dialect: Dialect, rand: () => number, k: number, size: number): JsonObject {
  const text = `${k} ${'x'.repeat(Math.floor(rand() * size))}`
  const role = k % 2 === 0 ? 'user' : 'assistant'
  if (dialect.name === 'responses') return { type: 'message', role, content: [{ type: 'input_text', text }] }
  if (dialect.name === 'openai') return { role, content: text }
  return { role, content: [{ type: 'text', text }] }
}

function tool(dialect: Dialect, name: string): JsonObject {
  if (dialect.name === 'openai')
    return {
      type: 'function',
      function: { name, description: `${name} tool`, parameters: { type: 'object' } },
    }
  if (dialect.name === 'responses')
    return { type: 'function', name, description: `${name} tool`, parameters: { type: 'object' } }
  return { name, description: `${name} tool`, input_schema: { type: 'object' } }
}

function start(dialect: Dialect, rand: () => number): JsonObject {
  const field = dialect.transcriptField
  const body: JsonObject = { model: 'm-1', max_tokens: 12 }
  body[field] = Array.from({ length: 4 }, (_, k) => entry(dialect, rand, k, 3000))
  body.tools = ['a', 'b', 'c', 'd', 'e'].map((n) => tool(dialect, n))
  if (dialect.name === 'anthropic') body.system = [{ type: 'text', text: 'You are a test.' }]
  body.stream = true
  return body
}

/** The last content block of the last entry carries the only marker (Claude Code moves it every turn). */
function moveMarker(body: JsonObject, field: string): void {
  const list = body[field] as JsonObject[]
  for (const m of list)
    if (Array.isArray(m.content)) for (const b of m.content as JsonObject[]) delete b.cache_control
  const last = list[list.length - 1]?.content
  if (Array.isArray(last)) (last[last.length - 1] as JsonObject).cache_control = { type: 'ephemeral' }
}

type Edit = (body: JsonObject, dialect: Dialect, rand: () => number) => JsonObject | string
const clone = (v: JsonObject): JsonObject => JSON.parse(JSON.stringify(v)) as JsonObject

/** Edits a client makes between two requests, as values or (the last ones) as text. */
const EDITS: Record<string, Edit> = {
  append(b, d, r) {
    const list = b[d.transcriptField] as Json[]
    const n = 1 + Math.floor(r() * 3)
    for (let k = 0; k < n; k++) list.push(entry(d, r, list.length, r() < 0.2 ? 80_000 : 4000))
    return b
  },
  'append and move the marker'(b, d, r) {
    EDITS.append?.(b, d, r)
    moveMarker(b, d.transcriptField)
    return b
  },
  'rewrite an earlier entry'(b, d, r) {
    const list = b[d.transcriptField] as Json[]
    list[Math.floor(r() * list.length)] = entry(d, r, 99, 500)
    return b
  },
  'drop a tool'(b, _d, r) {
    const tools = b.tools as Json[]
    if (tools.length > 1) tools.splice(Math.floor(r() * tools.length), 1)
    return b
  },
  'reorder the tools'(b) {
    ;(b.tools as Json[]).reverse()
    return b
  },
  'reorder the top-level keys'(b) {
    return Object.fromEntries(Object.entries(b).reverse()) as JsonObject
  },
  'a longer number where a shorter one was'(b) {
    b.max_tokens = Number(`${String(b.max_tokens)}3`)
    return b
  },
  'a key after the transcript'(b) {
    b.metadata = { user_id: 'u' }
    return b
  },
  'a key removed'(b) {
    delete b.stream
    return b
  },
  'the model changed'(b) {
    b.model = 'm-2'
    return b
  },
  'spaced out'(b) {
    return JSON.stringify(b, null, 2)
  },
  'a bad field in the new tail'(b, d) {
    ;(b[d.transcriptField] as Json[]).push({ role: 5, content: 'x' })
    return b
  },
  'too deep in the new tail'(b, d) {
    const deep = `${'['.repeat(600)}${']'.repeat(600)}`
    const text = JSON.stringify(b)
    const list = JSON.stringify(b[d.transcriptField])
    return text.replace(list, `${list.slice(0, -1)},${deep}]`)
  },
  'torn at its end'(b) {
    return JSON.stringify(b).slice(0, -1)
  },
  'a repeated top-level key'(b) {
    return JSON.stringify(b).replace(/}$/, ',"model":"again"}')
  },
  'bytes after the object'(b) {
    return `${JSON.stringify(b)} x`
  },
}

describe('incremental accept', () => {
  test("a long conversation's every step reads on the last one's facts, to the same value, scan and entries", () => {
    const c = new Conversation(7)
    let prev = readWhole(c.next(), anthropic) as ReadFacts
    for (let i = 0; i < 40; i++) {
      const bytes = c.next()
      const fast = readOnFacts(prev, bytes, anthropic)
      const whole = readWhole(bytes, anthropic) as ReadFacts
      expect(fast).toBeDefined()
      expectSame(fast as ReadFacts, whole)
      // Everything but the new tail is the previous value itself, not a copy.
      const was = prev.parsed.messages as Json[]
      expect((fast as ReadFacts).parsed.tools).toBe(prev.parsed.tools)
      // (once the moving marker has left the first message)
      if (i > 2) expect(((fast as ReadFacts).parsed.messages as Json[])[0]).toBe(was[0])
      prev = fast as ReadFacts
    }
  })

  test('for random edits in every dialect the fast path and the general path agree on accept and on the hold, byte for byte', () => {
    let fastTaken = 0
    let total = 0
    for (const dialect of DIALECTS) {
      const rand = rng(dialect.name.length * 977)
      let body = start(dialect, rand)
      let prev = readWhole(jsonBytes(body), dialect) as ReadFacts
      const fastBefore = fastTaken
      expect(prev).toBeDefined()
      const names = Object.keys(EDITS)
      for (let step = 0; step < 120; step++) {
        const name = names[Math.floor(rand() * names.length)] as string
        const out = (EDITS[name] as Edit)(clone(body), dialect, rand)
        const next = Buffer.from(typeof out === 'string' ? out : JSON.stringify(out))
        const whole = readWhole(next, dialect)
        const fast = readOnFacts(prev, next, dialect)
        total++
        if (whole === undefined) {
          // A request the general path refuses is never read by the fast one.
          expect({ edit: name, fast }).toEqual({ edit: name, fast: undefined })
          continue
        }
        if (fast) {
          fastTaken++
          expectSame(fast, whole)
          expect(held(dialect, prev, fast)).toEqual(held(dialect, prev, whole))
          const edit = [{ key: 'model', value: jsonBytes('routed') }]
          expect(applyEdits(next, fast.top, edit).equals(applyEdits(next, whole.top, edit))).toBe(true)
        }
        // The next request extends what this one was, as a client's does.
        body = JSON.parse(next.toString('utf8')) as JsonObject
        prev = fast ?? whole
      }
      // Every dialect's transcript takes the fast path, not only the one the others share.
      expect({ dialect: dialect.name, fast: fastTaken - fastBefore > 0 }).toEqual({
        dialect: dialect.name,
        fast: true,
      })
    }
    // The edits a client makes most (appends, a moved marker) take the fast path.
    expect(fastTaken).toBeGreaterThan(total / 3)
  })

  test('a request that shares nothing with the last one is left to the general path', () => {
    const a = jsonBytes({ model: 'a', messages: [] })
    const prev = readWhole(a, anthropic) as ReadFacts
    expect(readOnFacts(prev, Buffer.from(' {"model":"a","messages":[]}'), anthropic)).toBeUndefined()
    expect(readOnFacts(prev, Buffer.from('[]'), anthropic)).toBeUndefined()
  })

  test('factsOf keeps no transcript entries when the transcript is not an array', () => {
    const bytes = jsonBytes({ model: 'm', input: 'hello' })
    const top = scanTopLevel(bytes) as ScannedTop
    const responses = DIALECTS.find((d) => d.name === 'responses') as Dialect
    const facts = factsOf(bytes, top, JSON.parse(bytes.toString()) as JsonObject, responses)
    expect(facts.entries).toBeUndefined()
    const next = jsonBytes({ model: 'm', input: 'hello again' })
    expectSame(readOnFacts(facts, next, responses) as ReadFacts, readWhole(next, responses) as ReadFacts)
  })
})
