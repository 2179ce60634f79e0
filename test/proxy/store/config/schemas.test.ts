/**
 * store/config/schemas: the JSON Schemas of `schemas/`, compiled once with one ajv. Covers: a validator
 * is compiled once and reused, defaults are filled in, the error told first is an unknown key
 * before what it made missing, and each kind of error reads as one sentence naming where it is.
 */
import fs from 'node:fs'
import path from 'node:path'
import type { ErrorObject } from 'ajv'
import {
  describeSchemaError,
  firstError,
  SCHEMAS_DIR,
  schemaValidator,
} from '../../../../proxy/store/config/schemas'

/** The errors ajv reports for `doc` against `schemas/<name>.schema.json`. */
function errorsOf(name: string, doc: unknown): ErrorObject[] {
  const v = schemaValidator(name)
  expect(v(doc)).toBe(false)
  return [...(v.errors ?? [])]
}

describe('schemaValidator', () => {
  it('loads every schema from the package schemas/ folder and compiles each one once', () => {
    const names = fs.readdirSync(SCHEMAS_DIR).filter((f) => f.endsWith('.schema.json'))
    expect(names).toEqual(expect.arrayContaining(['holdfast.schema.json', 'providers.schema.json']))
    for (const f of names) {
      const name = path.basename(f, '.schema.json')
      expect(schemaValidator(name)).toBe(schemaValidator(name))
    }
    expect(() => schemaValidator('no-such-schema')).toThrow(/ENOENT/)
  })

  it('fills in defaults while it validates', () => {
    const doc: Record<string, unknown> = { listen: {}, defaults: {}, providers: {} }
    expect(schemaValidator('holdfast')(doc)).toBe(true)
    expect(doc.listen).toEqual({ host: '127.0.0.1', port: 8787 })
    expect(doc.defaults).toEqual({ workspace: 'default', agent: 'main' })
    expect(doc.browser_origins).toEqual([])
  })
})

describe('firstError', () => {
  it('tells an unknown key before a missing one, and a missing one before any other', () => {
    // A typo: `listn` is unknown and made `listen` missing; `defaults` is the wrong type.
    const errors = errorsOf('holdfast', { listn: {}, defaults: 3, providers: {} })
    expect(errors.map((e) => e.keyword)).toEqual(
      expect.arrayContaining(['additionalProperties', 'required', 'type']),
    )
    // Whatever order ajv reports them in.
    for (const order of [errors, [...errors].reverse()]) {
      expect(firstError(order)?.keyword).toBe('additionalProperties')
    }
    const noUnknown = errors.filter((e) => e.keyword !== 'additionalProperties')
    expect(firstError(noUnknown)?.keyword).toBe('required')
    expect(firstError(null)).toBeUndefined()
    expect(firstError([])).toBeUndefined()
  })
})

describe('describeSchemaError', () => {
  const f = '/h/holdfast.yaml'
  const only = (name: string, doc: unknown, keyword: string): ErrorObject =>
    errorsOf(name, doc).find((e) => e.keyword === keyword) as ErrorObject

  it('names an unknown key and where it is, with the noun the reader knows', () => {
    const e = only(
      'holdfast',
      { listen: { host: 'h', port: 1, hots: 1 }, defaults: {}, providers: {} },
      'additionalProperties',
    )
    expect(describeSchemaError(f, e)).toBe(`${f}: unknown key "hots" at listen`)
    expect(describeSchemaError('plugin x', e, 'option')).toBe('plugin x: unknown option "hots" at listen')
    const top = only(
      'holdfast',
      { bogus: 1, listen: {}, defaults: {}, providers: {} },
      'additionalProperties',
    )
    expect(describeSchemaError(f, top)).toBe(`${f}: unknown key "bogus" at (top level)`)
  })

  it('names a missing key, with its parent unless it is at the top level', () => {
    expect(describeSchemaError(f, only('holdfast', { listen: {}, defaults: {} }, 'required'))).toBe(
      `${f}: missing key "providers"`,
    )
    const nested = only('providers', { roles: { r: { provider: 'p' } } }, 'required')
    expect(describeSchemaError('providers.yaml', nested)).toBe('providers.yaml: roles.r: missing key "model"')
  })

  it("lists the allowed values of an enum, and falls back to ajv's message with the dotted path", () => {
    const e = only(
      'holdfast',
      { listen: {}, defaults: {}, providers: { p: { dialect: 'klingon', base_url: 'https://x' } } },
      'enum',
    )
    const text = describeSchemaError(f, e)
    expect(text).toMatch(
      new RegExp(`^${f.replace(/[/.]/g, '\\$&')}: providers\\.p\\.dialect: expected one of "`),
    )
    expect(text).toContain('"anthropic"')
    const port = only('holdfast', { listen: { port: 'x' }, defaults: {}, providers: {} }, 'type')
    expect(describeSchemaError(f, port)).toBe(`${f}: listen.port: must be integer`)
  })
})
