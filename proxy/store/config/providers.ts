/**
 * `providers.yaml` (on a `config/<name>` branch): parsed and validated exactly one way, used by
 * the proxy, the `reference-transaction` hook and `holdfast config`. Invariant: a file that
 * fails is refused with one sentence naming the file, the role and the key; an empty file is
 * refused (it must at least say `roles: {}`).
 */
import YAML from 'yaml'
import type { ErrorObject } from 'ajv'
import type { ProvidersConfig, Role } from '../../../generated/providers'
import { checkName } from '../../core/naming'
import type { ProviderRow } from '.'
import { firstError, schemaValidator } from './schemas'

export type { ProvidersConfig, Role }
export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string }

export const PROVIDERS_FILE = 'providers.yaml'

/** Compiled on first use: commands that never read this file do not pay for ajv. */
const validator = () => schemaValidator<ProvidersConfig>('providers')

function describe(file: string, err: ErrorObject): string {
  const parts = err.instancePath.split('/').slice(1)
  const at = parts.length ? parts.join('.') : '(top level)'
  switch (err.keyword) {
    case 'additionalProperties':
      return `${file}: ${at}: unknown key "${String(err.params.additionalProperty)}"`
    case 'required':
      return `${file}: ${at}: missing key "${String(err.params.missingProperty)}"`
    default:
      return `${file}: ${at}: ${err.message ?? 'is invalid'}`
  }
}

/**
 * Parse `providers.yaml` text. With `rows` (holdfast.yaml's provider rows, as the hook and
 * `holdfast config` pass them), a role naming an undeclared row is an error; the proxy reads
 * without them and refuses only a request that uses such a role, naming role and row.
 */
export function parseProviders(
  text: string,
  file: string,
  rows?: Readonly<Record<string, ProviderRow>>,
): Parsed<ProvidersConfig> {
  let doc: unknown
  try {
    doc = YAML.parse(text)
  } catch (err) {
    return { ok: false, error: `${file}: not valid YAML: ${(err as Error).message.split('\n')[0]}` }
  }
  const validate = validator()
  if (!validate(doc)) {
    const first = firstError(validate.errors)
    return { ok: false, error: first ? describe(file, first) : `${file}: invalid` }
  }
  for (const [name, role] of Object.entries(doc.roles)) {
    const problem = checkName('role', name)
    if (problem) return { ok: false, error: `${file}: roles: ${problem}` }
    if (rows && !Object.hasOwn(rows, role.provider)) {
      const declared = Object.keys(rows).join(', ') || 'none'
      return {
        ok: false,
        error: `${file}: roles.${name}.provider: "${role.provider}" is not a provider row in holdfast.yaml (declared: ${declared})`,
      }
    }
  }
  return { ok: true, value: doc }
}

/** `providers.yaml` text for a set of roles (what `holdfast config set-role` commits). */
export function renderProviders(config: ProvidersConfig): string {
  const header =
    '# Roles for this workspace (docs/roles.md): a request whose model, or x-holdfast-role header,\n' +
    "# names a role goes to that role's provider row (holdfast.yaml) with that role's model.\n"
  const names = Object.keys(config.roles).sort()
  if (names.length === 0) return `${header}roles: {}\n`
  const sorted: ProvidersConfig = {
    roles: Object.fromEntries(names.map((n) => [n, config.roles[n] as Role])),
  }
  return header + YAML.stringify(sorted)
}
