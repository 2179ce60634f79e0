/**
 * Hostile requests for the fuzz test and `bench/fuzz.ts`, from a seed: wrong types for every field
 * the proxy reads, deep nesting, huge strings, duplicate keys, invalid UTF-8, non-JSON, wrong
 * content types, Origin headers, odd Host values, long, odd and non-UTF-8 names in the path and in
 * the headers, malformed address prefixes, OPTIONS, credentials in query strings — mixed with
 * well-formed steps so agents have a history to be bricked. Each case says which workspace it
 * addresses, so a refusal can be checked to have left nothing on disk.
 */
import http from 'node:http'

/** mulberry32: a small seedable PRNG (same seed, same cases). */
export function rng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

export type Dialect = 'anthropic' | 'openai'

export interface FuzzCase {
  i: number
  kind: string
  dialect: Dialect
  method: string
  path: string
  /** Header values as latin1 strings (one char per byte on the wire). */
  headers: Record<string, string>
  body: Buffer
  /** The workspace this request addresses when it is refused, to check nothing was made. */
  workspace: string | undefined
  /** Well-formed: expected to be recorded (200), the agent used later to check it is not bricked. */
  valid: boolean
  agent: string
}

const WRONG: unknown[] = ['x', 7, 0, -1, 1e308, true, false, null, {}, [], [1], { a: 1 }, [null], ['x']]

const ANTHROPIC_FIELDS = [
  'model',
  'messages',
  'system',
  'tools',
  'tool_choice',
  'thinking',
  'stream',
  'max_tokens',
  'metadata',
]
const OPENAI_FIELDS = [
  'model',
  'messages',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'stream',
  'stream_options',
  'prompt_cache_key',
  'max_tokens',
]

export function generate(seed: number, count: number, agents = 40): FuzzCase[] {
  const r = rng(seed)
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T
  const cases: FuzzCase[] = []
  for (let i = 0; i < count; i++) {
    const dialect: Dialect = r() < 0.5 ? 'anthropic' : 'openai'
    const endpoint = dialect === 'anthropic' ? '/v1/messages' : '/v1/chat/completions'
    const agent = `fa${Math.floor(r() * agents)}`
    const ws = `fz${i}`
    const good: Record<string, unknown> =
      dialect === 'anthropic'
        ? {
            model: 'claude-sonnet-4-5',
            max_tokens: 8,
            tools: [{ name: 'Read', input_schema: { type: 'object' } }],
            messages: [{ role: 'user', content: [{ type: 'text', text: `hello ${i}` }] }],
          }
        : {
            model: 'gpt-5',
            tools: [{ type: 'function', function: { name: 'Read', parameters: { type: 'object' } } }],
            messages: [
              { role: 'system', content: 'terse' },
              { role: 'user', content: `hello ${i}` },
            ],
          }
    const headers: Record<string, string> = { 'content-type': 'application/json' }
    if (dialect === 'anthropic') headers['anthropic-version'] = '2023-06-01'
    let path = `/w/${ws}/a/${agent}${endpoint}`
    let method = 'POST'
    let body: Buffer | undefined
    let workspace: string | undefined = ws
    let valid = false
    const roll = r()
    let kind: string
    if (roll < 0.2) {
      // A well-formed step on a shared workspace: the agent gets a history.
      kind = 'valid'
      path = `/w/fzshared/a/${agent}${endpoint}`
      workspace = undefined
      valid = true
      if (r() < 0.3) good.stream = true
    } else if (roll < 0.42) {
      kind = 'wrong-type'
      const field = pick(dialect === 'anthropic' ? ANTHROPIC_FIELDS : OPENAI_FIELDS)
      let wrong = pick(WRONG)
      // keep it wrong for that field
      if (field === 'stream' || field === 'parallel_tool_calls') wrong = pick(['yes', 1, {}, [], null])
      if (field === 'model' || field === 'prompt_cache_key') wrong = pick([1, {}, [], true, null])
      if (field === 'max_tokens') wrong = pick(['x', {}, [], true, null])
      if (field === 'messages' || field === 'tools')
        wrong = pick(['x', 7, {}, true, null, [1], ['x'], [null]])
      if (field === 'tool_choice')
        wrong = dialect === 'anthropic' ? pick(['auto', 1, [], true, null]) : pick([1, [], true, null])
      if (field === 'system') wrong = pick([1, {}, true, null, [1], ['x']])
      if (['thinking', 'metadata', 'stream_options'].includes(field)) wrong = pick(['x', 1, [], true, null])
      good[field] = wrong
    } else if (roll < 0.52) {
      kind = 'nested-wrong-type'
      const nested =
        dialect === 'anthropic'
          ? pick([
              {
                role: 'user',
                content: [{ type: 'text', text: pick(WRONG.filter((w) => typeof w !== 'string')) }],
              },
              { role: 7, content: 'x' },
              { role: 'user', content: 12 },
              { role: 'user', content: [{ type: 'text', text: 'x', cache_control: 'ephemeral' }] },
              { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 3, input: {} }] },
              'not a message',
            ])
          : pick([
              { role: 'assistant', tool_calls: [{ type: 'function', function: 'x' }] },
              { role: 'assistant', tool_calls: 'x' },
              { role: 'assistant', tool_calls: [{ type: 'function', function: { name: 9 } }] },
              { role: 'user', content: 5 },
              { role: 'user', content: [{ type: 'text', text: 5 }] },
              7,
            ])
      ;(good.messages as unknown[]).push(nested)
      if (r() < 0.3) good.tools = [{ type: 'function', function: { description: 'no name' } }, { name: 5 }]
    } else if (roll < 0.57) {
      kind = 'deep'
      const depth = r() < 0.1 ? 100_000 : 513 + Math.floor(r() * 1000)
      const text = JSON.stringify(good)
      body = Buffer.from(text.replace(/}$/, `,"extra":${'['.repeat(depth)}${']'.repeat(depth)}}`))
    } else if (roll < 0.6) {
      kind = 'huge-string'
      ;(good.messages as { content: unknown }[])[0]!.content = 'x'.repeat(200_000 + Math.floor(r() * 200_000))
      workspace = undefined // accepted: it is a valid request
      path = `/w/fzshared/a/${agent}${endpoint}`
      valid = true
    } else if (roll < 0.63) {
      kind = 'duplicate-key'
      body = Buffer.from(JSON.stringify(good).replace(/^\{/, '{"model":"dup",'))
    } else if (roll < 0.66) {
      kind = 'invalid-utf8'
      const text = Buffer.from(JSON.stringify(good))
      const at = text.indexOf('hello')
      body = Buffer.concat([text.subarray(0, at), Buffer.from([0xff, 0xfe, 0xc3]), text.subarray(at)])
      // JSON.parse replaces bad bytes; the request may well be valid then: only its status is checked
      workspace = undefined
      path = `/w/fzutf8/a/${agent}${endpoint}`
    } else if (roll < 0.7) {
      kind = 'not-json'
      body = pick([
        Buffer.from('not json'),
        Buffer.from(JSON.stringify(good).slice(0, 20)),
        Buffer.from('[1,2,3]'),
        Buffer.from('"a string"'),
        Buffer.from(''),
        Buffer.from(Array.from({ length: 64 }, () => Math.floor(r() * 256))),
      ])
    } else if (roll < 0.75) {
      kind = 'content-type'
      const t = pick([
        'text/plain',
        'application/x-www-form-urlencoded',
        'application/json-seq',
        'multipart/form-data',
        undefined,
      ])
      if (t === undefined) delete headers['content-type']
      else headers['content-type'] = t
    } else if (roll < 0.79) {
      kind = 'origin'
      headers.origin = pick(['https://evil.example', 'null', 'http://localhost:3000', 'file://'])
    } else if (roll < 0.83) {
      kind = 'host'
      headers.host = pick([
        '127.0.0.1:1@evil.example',
        'localhost:99.evil.example',
        'evil.example',
        'localhost:80:80',
        '[::1',
        '',
        '127.0.0.1.evil.example',
      ])
    } else if (roll < 0.9) {
      kind = 'name'
      const long = 'n'.repeat(251 + Math.floor(r() * 50))
      const odd = pick([
        long,
        '%00',
        '%2F',
        '..',
        '%2e%2e',
        'a%20b',
        '.hidden',
        'x.lock',
        '-dash',
        'a~b',
        'a:b',
        '%C3%28',
        '%FF',
      ])
      if (r() < 0.5) path = `/w/${ws}/a/${odd}${endpoint}`
      else {
        path = endpoint
        headers['x-holdfast-workspace'] = ws
        headers['x-holdfast-agent'] = pick([
          long,
          '..',
          'a b',
          'x.lock',
          Buffer.from([0x63, 0xe9]).toString('latin1'),
        ])
      }
    } else if (roll < 0.94) {
      kind = 'prefix'
      path = pick([
        `/w/${ws}${endpoint}`,
        `/w//a/${agent}${endpoint}`,
        `/w/${ws}/a/${endpoint}`,
        `/w/${ws}/b/${agent}${endpoint}`,
        `/w/${ws}/a`,
        `/w`,
      ])
    } else if (roll < 0.97) {
      kind = 'options'
      method = 'OPTIONS'
      if (r() < 0.7) headers.origin = 'https://evil.example'
      body = Buffer.alloc(0)
    } else {
      kind = 'query-secret'
      path = `/w/fzshared/a/${agent}${endpoint}?beta=true&key=fz-secret-${i}&token=fz-secret-${i}`
      workspace = undefined
      valid = true
    }
    cases.push({
      i,
      kind,
      dialect,
      method,
      path,
      headers,
      body: body ?? Buffer.from(JSON.stringify(good)),
      workspace,
      valid,
      agent,
    })
  }
  return cases
}

export interface Answer {
  status: number
  headers: http.IncomingHttpHeaders
  body: Buffer
}

/** Send one case as its exact bytes (no client-side validation of names or headers). */
export function send(base: string, c: FuzzCase): Promise<Answer> {
  const u = new URL(base)
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: u.hostname,
      port: u.port,
      method: c.method,
      path: c.path,
      headers: {
        host: `127.0.0.1:${u.port}`,
        ...c.headers,
        'content-length': String(c.body.length),
        connection: 'close',
      },
      insecureHTTPParser: true,
    })
    req.on('response', (res) => {
      const chunks: Buffer[] = []
      res.on('data', (d: Buffer) => chunks.push(d))
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
      )
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(c.body)
  })
}

/** Whether an error answer is in an envelope: the dialect's on a provider path, holdfast's own elsewhere. */
export function inEnvelope(c: FuzzCase, a: Answer): boolean {
  let v: unknown
  try {
    v = JSON.parse(a.body.toString('utf8'))
  } catch {
    return false
  }
  const o = v as { type?: unknown; error?: { type?: unknown; message?: unknown; code?: unknown } }
  if (typeof o.error?.message !== 'string') return false
  const onOpenai = /\/v1\/chat\/completions(\?|$)/.test(c.path)
  if (onOpenai) return typeof o.error.type === 'string'
  if (/\/v1(\/|\?|$)/.test(c.path)) return o.type === 'error' && typeof o.error.type === 'string'
  return typeof o.error.code === 'string' || o.type === 'error'
}
