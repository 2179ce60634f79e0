import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Composed, PreviousStep } from '../../../proxy/core/hold'
import { hold } from '../../../proxy/core/hold'
import type { Json, JsonObject } from '../../../proxy/core/json'
import { isObject, withoutCacheControl } from '../../../proxy/core/json'
import type { ScannedTop } from '../../../proxy/core/json-scan'
import { jsonBytes } from '../../../proxy/core/splice'
import { scanTopLevel } from '../../../proxy/core/json-scan'
import { anthropic, dialectByName } from '../../../proxy/dialects'

const FIXTURES = join(__dirname, '..', '..', 'fixtures', 'hold')
const NOW = Date.UTC(2026, 11, 2, 12, 0, 0)
type Headers = Record<string, string | undefined>

function parseObject(bytes: Buffer): JsonObject {
  const v = JSON.parse(bytes.toString('utf8')) as Json
  if (!isObject(v)) throw new Error('fixture body is not an object')
  return v
}

function scanned(bytes: Buffer): ScannedTop {
  const top = scanTopLevel(bytes)
  if (!top.ok) throw new Error(top.error)
  return top
}

function composedOf(bytes: Buffer, headers: Headers = {}): Composed {
  return { bytes, parsed: parseObject(bytes), top: scanned(bytes), headers }
}

describe('the hold, golden cases', () => {
  const cases = readdirSync(FIXTURES).map((name) => {
    const file = (f: string) => join(FIXTURES, name, f)
    const text = (f: string) => readFileSync(file(f), 'utf8')
    const optionalJson = <T>(f: string): T | undefined =>
      existsSync(file(f)) ? (JSON.parse(text(f)) as T) : undefined
    return { name, note: text('note.txt').trim(), file, text, optionalJson }
  })

  it('has every case the rule needs', () => {
    expect(cases.length).toBeGreaterThanOrEqual(30)
  })

  it.each(cases)('$note ($name)', ({ file, text, optionalJson }) => {
    const dialect = dialectByName(text('dialect.txt').trim())
    if (!dialect) throw new Error('unknown dialect in dialect.txt')
    const meta =
      optionalJson<{ sentAgoMs?: number; headers?: Headers; status?: number }>('previous-meta.json') ?? {}
    let previous: PreviousStep | undefined
    if (existsSync(file('previous.json'))) {
      const bytes = readFileSync(file('previous.json'))
      previous = {
        path: 'steps/main/001/request.json',
        bytes,
        parsed: parseObject(bytes),
        sentAt: NOW - (meta.sentAgoMs ?? 60_000),
        headers: meta.headers ?? {},
        status: meta.status,
      }
    }
    const composed = composedOf(
      readFileSync(file('composed.json')),
      optionalJson<Headers>('composed-headers.json'),
    )
    const result = hold(dialect, previous, composed, { now: NOW })
    expect(result.body.toString('utf8')).toBe(text('expected.json'))
    expect(result.body.equals(readFileSync(file('expected.json')))).toBe(true)
    expect(result.verdict).toEqual(JSON.parse(text('verdict.json')))
  })
})

/** A request in the cache order a provider reads it: tools, then system, then messages, markers ignored. */
function rendering(body: Buffer): string {
  const b = parseObject(body)
  const part = (v: Json | undefined) => JSON.stringify(withoutCacheControl(v ?? null))
  const messages = Array.isArray(b.messages) ? b.messages : []
  return part(b.tools) + part(b.system) + messages.map(part).join('')
}

describe('the hold over a conversation', () => {
  const tool = (name: string) => ({
    name,
    description: `The ${name} tool.`,
    input_schema: { type: 'object' },
  })
  const A = tool('Read')
  const B = tool('Write')
  const C = tool('fs_grep')
  const turn = (n: number): Json[] => [
    { role: 'assistant', content: [{ type: 'text', text: `answer ${n}` }] },
    { role: 'user', content: [{ type: 'text', text: `question ${n + 1}` }] },
  ]
  const request = (tools: Json[], system: string, turns: number): Buffer => {
    const messages: Json[] = [{ role: 'user', content: 'question 1' }]
    for (let n = 1; n < turns; n++) messages.push(...turn(n))
    return jsonBytes({ model: 'claude-sonnet-4-5', max_tokens: 1024, system, tools, messages })
  }

  it('keeps each step an extension of the last until the system edit, where the retired tool finally drops', () => {
    // step 1 and 2 with A, B, C; C retired after step 2; the system edited before step 4.
    const compositions = [
      request([A, B, C], 'S1', 1),
      request([A, B, C], 'S1', 2),
      request([A, B], 'S1', 3),
      request([A, B], 'S2', 4),
    ]
    const sent: Buffer[] = []
    const verdicts = compositions.map((bytes, i) => {
      const prevBytes = sent[i - 1]
      const previous: PreviousStep | undefined = prevBytes && {
        path: `steps/main/00${i}/request.json`,
        bytes: prevBytes,
        parsed: parseObject(prevBytes),
        top: scanned(prevBytes),
        sentAt: NOW - 30_000,
        headers: {},
        status: 200,
      }
      const { body, verdict } = hold(anthropic, previous, composedOf(bytes), { now: NOW })
      sent.push(body)
      return verdict
    })
    expect(verdicts.map((v) => v.reason)).toEqual([
      'first-step',
      'no-subtraction',
      'applied',
      'system-changed',
    ])
    expect(verdicts[2]?.held).toEqual(['fs_grep'])
    const [r1, r2, r3, r4] = sent.map(rendering)
    expect(r2?.startsWith(r1 ?? '-')).toBe(true)
    expect(r3?.startsWith(r2 ?? '-')).toBe(true)
    expect(r4?.startsWith(r3 ?? '-')).toBe(false)
    expect(parseObject(sent[3] ?? Buffer.from('{}')).tools).toEqual([A, B])
  })
})

describe('the hold, edge rules', () => {
  const prevBody = jsonBytes({
    model: 'm',
    tools: [{ type: 'mystery_tool' }, { name: 'Read' }],
    messages: [],
  })
  const previous = (over: Partial<PreviousStep> = {}): PreviousStep => ({
    path: 'steps/a/004/request.json',
    bytes: prevBody,
    parsed: parseObject(prevBody),
    sentAt: NOW,
    headers: {},
    ...over,
  })
  const now = composedOf(jsonBytes({ model: 'm', tools: [{ name: 'Read' }], messages: [] }))

  it('names a held tool without a name by its type', () => {
    expect(hold(anthropic, previous(), now, { now: NOW }).verdict.held).toEqual(['mystery_tool'])
  })

  it('takes the cache lifetime and breakpoint limit from the context when given', () => {
    expect(
      hold(anthropic, previous({ sentAt: NOW - 2000 }), now, { now: NOW, ttlMs: 1000 }).verdict.reason,
    ).toBe('ttl-expired')
    const marked = jsonBytes({
      model: 'm',
      tools: [{ name: 'X', cache_control: { type: 'ephemeral' } }, { name: 'Read' }],
    })
    const verdict = hold(anthropic, previous({ bytes: marked, parsed: parseObject(marked) }), now, {
      now: NOW,
      maxBreakpoints: 0,
    }).verdict
    expect(verdict).toEqual({ applied: false, reason: 'breakpoint-limit', detail: '1 breakpoints', held: [] })
  })

  it('holds exactly at the cache lifetime and not a millisecond after', () => {
    expect(hold(anthropic, previous({ sentAt: NOW - 300_000 }), now, { now: NOW }).verdict.applied).toBe(true)
    expect(hold(anthropic, previous({ sentAt: NOW - 300_001 }), now, { now: NOW }).verdict.applied).toBe(
      false,
    )
  })

  it('uses the cached scan of the previous record instead of scanning again', () => {
    const stale: ScannedTop = { ok: true, keys: new Map(), open: 0, close: prevBody.length - 1 }
    expect(hold(anthropic, previous({ top: stale }), now, { now: NOW })).toEqual({
      body: now.bytes,
      verdict: {
        applied: false,
        reason: 'record-fault',
        detail: 'its "tools" key is not at the top level',
        held: [],
      },
    })
  })

  it('sends the composition when the record repeats its tools key, with the verdict record-fault', () => {
    const dup = Buffer.from('{"model":"m","tools":[{"name":"A"}],"tools":[{"name":"A"},{"name":"Read"}]}')
    const r = hold(anthropic, previous({ bytes: dup, parsed: parseObject(dup) }), now, { now: NOW })
    expect(r.body).toBe(now.bytes)
    expect(r.verdict).toMatchObject({ applied: false, reason: 'record-fault' })
    expect(r.verdict.detail).toContain('duplicated top-level key "tools"')
  })

  it('sends a composition whose own tools value is malformed as it is', () => {
    const bad = composedOf(jsonBytes({ model: 'm', tools: { name: 'Read' }, messages: [] }))
    expect(hold(anthropic, previous(), bad, { now: NOW })).toEqual({
      body: bad.bytes,
      verdict: { applied: false, reason: 'not-a-sub-multiset', held: [] },
    })
  })
})
