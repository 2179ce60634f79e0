import { isDeepStrictEqual } from 'node:util'
import { inPieces, parseJsonBytes, PIECE } from '../../../proxy/core/json-bytes'
import { scanTopLevel } from '../../../proxy/core/json-scan'
import type { Json } from '../../../proxy/core/json'
import { rng as random } from '../../support/fuzz'

type Rng = () => number
const pick = <T>(r: Rng, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T

/** Characters that test the cuts: multi-byte UTF-8, astral (a surrogate pair), and every escape. */
const ALPHABET = ['a', 'b', ' ', 'é', '中', '😀', '\n', '"', '\\', '\t', '\u0001', '\u2028', '/', 'z']

function text(r: Rng, length: number): string {
  let s = ''
  while (s.length < length) s += r() < 0.7 ? 'lorem ipsum dolor sit amet ' : pick(r, ALPHABET)
  return s
}

/** A JSON value of about `size` bytes, mixing long strings, long arrays and wide objects. */
function doc(r: Rng, size: number, depth = 0): Json {
  if (size < 64 || depth > 6) {
    return pick<() => Json>(r, [
      () => text(r, Math.floor(r() * 20)),
      () => Math.floor(r() * 1e6) / 100,
      () => -0,
      () => 2 ** 70,
      () => r() < 0.5,
      () => null,
      () => [],
      () => ({}),
    ])()
  }
  const kind = r()
  if (kind < 0.3) return text(r, size)
  if (kind < 0.65) {
    const n = 1 + Math.floor(r() * 40)
    return Array.from({ length: n }, () => doc(r, size / n, depth + 1))
  }
  const n = 1 + Math.floor(r() * 40)
  const o: Record<string, Json> = {}
  for (let i = 0; i < n; i++) {
    const key = pick(r, ['role', 'content', 'text', '__proto__', '7', '10', `k${i}`, 'é"\\key', 'type'])
    Object.defineProperty(o, key, {
      value: doc(r, size / n, depth + 1),
      enumerable: true,
      writable: true,
      configurable: true,
    })
  }
  return o
}

const SPACE = [' ', '\n', '\t', '\r', '  ']

/** JSON text of `v` with random spacing, random `\uXXXX` escapes and some repeated keys. */
function write(r: Rng, v: Json): string {
  const sp = (): string => (r() < 0.2 ? pick(r, SPACE) : '')
  const str = (s: string): string =>
    JSON.stringify(s).replace(/[a-zé😀]/gu, (c) =>
      r() < 0.05
        ? [...c]
            .map((u) =>
              u
                .split('')
                .map((x) => `\\u${x.charCodeAt(0).toString(16).padStart(4, '0')}`)
                .join(''),
            )
            .join('')
        : c,
    )
  if (typeof v === 'string') return str(v)
  if (Array.isArray(v)) return `[${sp()}${v.map((x) => `${sp()}${write(r, x)}${sp()}`).join(',')}${sp()}]`
  if (v !== null && typeof v === 'object') {
    const members = Object.keys(v).map(
      (k) => `${sp()}${str(k)}${sp()}:${sp()}${write(r, v[k] as Json)}${sp()}`,
    )
    // A key written twice: JSON.parse keeps its first place and the last value.
    if (members.length > 1 && r() < 0.3) members.splice(0, 0, `${str(Object.keys(v)[0] as string)}:"first"`)
    return `{${members.join(',')}}`
  }
  return Object.is(v, -0) ? '-0' : JSON.stringify(v)
}

/** Deep equality that also compares the order of keys and own `__proto__` keys. */
function same(a: Json, b: Json): boolean {
  if (!isDeepStrictEqual(a, b)) return false
  if (Array.isArray(a) && Array.isArray(b)) return a.every((x, i) => same(x, b[i] as Json))
  if (a !== null && typeof a === 'object' && b !== null && typeof b === 'object' && !Array.isArray(a)) {
    const ka = Object.keys(a)
    const kb = Object.keys(b)
    if (ka.join('\0') !== kb.join('\0')) return false
    if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false
    return ka.every((k) => same(a[k] as Json, (b as Record<string, Json>)[k] as Json))
  }
  return true
}

/** What JSON.parse of the whole text throws, or undefined. */
function plainError(bytes: Buffer): string | undefined {
  try {
    JSON.parse(bytes.toString('utf8'))
    return undefined
  } catch (err) {
    return (err as Error).message
  }
}

function thrown(f: () => unknown): string | undefined {
  try {
    f()
    return undefined
  } catch (err) {
    return (err as Error).message
  }
}

const r = random(14)
const documents = Array.from({ length: 30 }, (_, i) => {
  const size = (3 + (i % 5) * 7) * PIECE
  const top = { model: 'm', max_tokens: 16, messages: doc(r, size), tail: doc(r, PIECE) }
  return Buffer.from(write(r, top as Json))
})

describe('parseJsonBytes', () => {
  it('gives JSON.parse’s value, keys in the same order, for large documents parsed in pieces', () => {
    for (const bytes of documents) {
      const pieces = inPieces(bytes)
      expect(pieces).toBeDefined()
      const plain = JSON.parse(bytes.toString('utf8')) as Json
      expect(same(pieces as Json, plain)).toBe(true)
      expect(same(parseJsonBytes(bytes), plain)).toBe(true)
    }
  })

  it('gives the same value from the top level’s scan, without walking the top level again', () => {
    let read = 0
    for (const bytes of documents) {
      const top = scanTopLevel(bytes)
      if (!top.ok) continue // a document that repeats a top-level key: the scan refuses it
      expect(same(inPieces(bytes, top) as Json, JSON.parse(bytes.toString('utf8')) as Json)).toBe(true)
      read++
    }
    expect(read).toBeGreaterThanOrEqual(10)
    // A large member's key is read from the bytes as JSON.parse reads them: an escape is decoded, a
    // raw control character (which the scan lets through) refuses the document.
    const long = 'x'.repeat(3 * PIECE)
    const escaped = Buffer.from(`{"a":1,"k\\u0007ey":"${long}"}`)
    const escapedTop = scanTopLevel(escaped)
    expect(escapedTop.ok && inPieces(escaped, escapedTop)).toEqual({ a: 1, 'k\u0007ey': long })
    const raw = Buffer.from(`{"k\u0007ey":"${long}"}`)
    const rawTop = scanTopLevel(raw)
    expect(rawTop.ok).toBe(true)
    expect(rawTop.ok && inPieces(raw, rawTop)).toBeUndefined()
    expect(thrown(() => parseJsonBytes(raw, rawTop.ok ? rawTop : undefined))).toBe(plainError(raw))
  })

  it('keeps a repeated key at its first place with its last value, and `__proto__` as an own key', () => {
    const big = 'x'.repeat(PIECE + 10)
    const bytes = Buffer.from(`{"__proto__":{"a":1},"k":1,"big":"${big}","k":2,"7":0,"more":"${big}","k":3}`)
    const v = inPieces(bytes) as Record<string, Json>
    expect(Object.keys(v)).toEqual(Object.keys(JSON.parse(bytes.toString()) as object))
    expect(v.k).toBe(3)
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype)
    expect(Object.prototype.hasOwnProperty.call(v, '__proto__')).toBe(true)
  })

  it('cuts a long string only between characters and outside escapes, whatever sits at the nominal cut', () => {
    // A character of every kind placed across the first cut, each in its own document.
    for (const around of ['é', '中', '😀', '\\n', '\\"', '\\\\', '\\u00e9', '\\ud83d\\ude00']) {
      for (let shift = -8; shift <= 8; shift++) {
        const head = 'a'.repeat(PIECE + shift)
        const bytes = Buffer.from(`{"s":"${head}${around.repeat(3)}${'b'.repeat(PIECE)}"}`)
        expect(inPieces(bytes)).toEqual(JSON.parse(bytes.toString()))
      }
    }
  })

  it('parses a long string of back-to-back escapes, where no cut is clean, whole', () => {
    const bytes = Buffer.from(`{"s":"${'\\\\'.repeat(2 * PIECE)}","n":1}`)
    expect(inPieces(bytes)).toEqual(JSON.parse(bytes.toString()))
  })

  it('throws exactly what JSON.parse throws for large documents that are not JSON', () => {
    const valid = documents[3] as Buffer
    const text = valid.toString('utf8')
    const at = (needle: string, from = 0): number => {
      const i = text.indexOf(needle, from)
      if (i < 0) throw new Error(`no ${needle}`)
      return i
    }
    const mid = Math.floor(text.length / 2)
    const broken: Buffer[] = [
      Buffer.from(text.slice(0, -1)), // torn at the end
      Buffer.from(`${text}x`), // bytes after the value
      Buffer.from(`\ufeff${text}`), // a byte-order mark
      Buffer.from(text.replace('"max_tokens"', '"max_tokens" 16,"x"')), // no colon
      Buffer.from(text.replace('"max_tokens":', '"max_tokens"::')),
      Buffer.from(`${text.slice(0, at(',', mid))},${text.slice(at(',', mid))}`), // two commas
      Buffer.from(`${text.slice(0, at('lorem', mid))}\u0001\n${text.slice(at('lorem', mid))}`), // raw control characters in a string
      Buffer.from(`${text.slice(0, text.lastIndexOf('}'))},}`), // a trailing comma in an object
      Buffer.from(`{"a":[${'"lorem ipsum",'.repeat(PIECE / 4)}]}`), // and in an array
      Buffer.from(`{"a":[${'"lorem ipsum",'.repeat(PIECE / 4)},"b"]}`), // an empty element
      Buffer.from(`{"a":${'[1,'.repeat(200)}${'1'.repeat(3 * PIECE)}${'],'.repeat(200)}}`), // brackets that do not close
      Buffer.from(text.replace('"model"', 'model')), // an unquoted key
    ]
    for (const [i, bytes] of broken.entries()) {
      const expected = plainError(bytes)
      expect([i, expected]).toEqual([i, expect.any(String)])
      expect(inPieces(bytes)).toBeUndefined()
      expect(thrown(() => parseJsonBytes(bytes))).toBe(expected)
    }
  })

  it('reads bytes that are not UTF-8 as JSON.parse of their decoding does', () => {
    const bytes = Buffer.concat([
      Buffer.from(`{"s":"${'a'.repeat(3 * PIECE)}`),
      Buffer.from([0xc3]),
      Buffer.from('"}'),
    ])
    expect(parseJsonBytes(bytes)).toEqual(JSON.parse(bytes.toString('utf8')))
  })

  it('parses a document nested deeper than the pieces go whole, as JSON.parse does (it does not recurse)', () => {
    const depth = 20_000
    const bytes = Buffer.from(`${'['.repeat(depth)}"${'x'.repeat(PIECE)}"${']'.repeat(depth)}`)
    expect(inPieces(bytes)).toBeUndefined()
    let v = parseJsonBytes(bytes)
    for (let i = 0; i < depth; i++) v = (v as Json[])[0] as Json
    expect(v).toBe('x'.repeat(PIECE))
  })

  it('parses small documents, and large scalars at the top, as JSON.parse does', () => {
    expect(parseJsonBytes(Buffer.from(' {"a":[1,2.50,"x"]} '))).toEqual({ a: [1, 2.5, 'x'] })
    const padded = Buffer.from(`${' '.repeat(3 * PIECE)}"${'y'.repeat(3 * PIECE)}"\n`)
    expect(parseJsonBytes(padded)).toBe('y'.repeat(3 * PIECE))
    expect(thrown(() => parseJsonBytes(Buffer.from('{"a":')))).toBe(plainError(Buffer.from('{"a":')))
  })
})
