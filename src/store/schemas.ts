/**
 * The JSON Schemas in `schemas/`, loaded from the package root (the same relative path from
 * `src/store` and `dist/store`), compiled once with ajv. Invariant: one ajv instance, defaults
 * filled in, so every validator of a holdfast file behaves the same.
 */
import fs from 'node:fs'
import path from 'node:path'
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv'

export const SCHEMAS_DIR = path.join(__dirname, '..', '..', 'schemas')
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
