/**
 * The JSON Schemas in `schemas/`, loaded from the package root, compiled once with ajv.
 * Invariant: one ajv instance, defaults filled in, so every validator of a holdfast file behaves the same.
 */
import fs from 'node:fs'
import path from 'node:path'
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv'
import { PACKAGE_ROOT } from '../../process/package-root'

export const SCHEMAS_DIR = path.join(PACKAGE_ROOT, 'schemas')
export const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: false })
const compiled = new Map<string, ValidateFunction>()

/** The compiled validator of `schemas/<name>.schema.json`. */
export function schemaValidator<T>(name: string): ValidateFunction<T> {
  let v = compiled.get(name)
  if (!v) {
    const schema = JSON.parse(
      fs.readFileSync(path.join(SCHEMAS_DIR, `${name}.schema.json`), 'utf8'),
    ) as object
    v = ajv.compile(schema)
    compiled.set(name, v)
  }
  return v as ValidateFunction<T>
}

/** The error to tell a person first: an unknown key (often a typo) before what it made missing. */
export function firstError(errors: readonly ErrorObject[] | null | undefined): ErrorObject | undefined {
  const rank = (e: ErrorObject): number =>
    e.keyword === 'additionalProperties' ? 0 : e.keyword === 'required' ? 1 : 2
  return [...(errors ?? [])].sort((a, b) => rank(a) - rank(b))[0]
}

/**
 * One sentence for an ajv error, `<prefix>: …`: the path and what was expected there. `noun` is
 * what the document's keys are to its reader ("key" in a file, "option" for a plugin).
 */
export function describeSchemaError(prefix: string, err: ErrorObject, noun = 'key'): string {
  const at = err.instancePath ? err.instancePath.slice(1).replace(/\//g, '.') : '(top level)'
  switch (err.keyword) {
    case 'additionalProperties':
      return `${prefix}: unknown ${noun} "${String(err.params.additionalProperty)}" at ${at}`
    case 'required':
      return `${prefix}: ${at === '(top level)' ? '' : at + ': '}missing ${noun} "${String(err.params.missingProperty)}"`
    case 'enum':
      return `${prefix}: ${at}: expected one of ${(err.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`
    default:
      return `${prefix}: ${at}: ${err.message ?? 'is invalid'}`
  }
}
