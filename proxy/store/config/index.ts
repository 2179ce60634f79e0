/**
 * `<home>/holdfast.yaml`: read, created with commented defaults when absent, validated against
 * `schemas/holdfast.schema.json` (ajv, defaults filled in). Invariant: a config that fails is
 * refused with one sentence naming the file, the key and what was expected; nothing half-applies.
 */
import fs from 'node:fs'
import path from 'node:path'
import YAML from 'yaml'
import type { HoldfastConfig, ProviderRow } from '../../../generated/holdfast'
import { checkName } from '../../core/naming'
import { homePaths } from '../home'
import { describeSchemaError, firstError, schemaValidator } from './schemas'

export type { HoldfastConfig, ProviderRow }

export const DEFAULT_CONFIG_YAML = `# holdfast settings. Reference: docs/configuration.md
listen: {host: 127.0.0.1, port: 8787}
defaults: {workspace: default, agent: main}
providers:                       # provider rows; the row named after a dialect is its default
  anthropic: {dialect: anthropic, base_url: https://api.anthropic.com}
  openai:    {dialect: openai,    base_url: https://api.openai.com/v1}
# token: a long random string   # then every request must carry it; unset, serve makes <home>/token
`

export class ConfigError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'ConfigError'
  }
}

/** Compiled on first use: commands that never read this file do not pay for ajv. */
const validator = () => schemaValidator<HoldfastConfig>('holdfast')

/** Parse and validate config text; `file` names it in errors. Defaults are filled in. */
export function parseConfig(text: string, file: string): HoldfastConfig {
  let doc: unknown
  try {
    doc = YAML.parse(text)
  } catch (err) {
    throw new ConfigError(`${file}: not valid YAML: ${(err as Error).message.split('\n')[0]}`)
  }
  if (doc === null || doc === undefined) doc = {}
  if (typeof doc === 'object' && !Array.isArray(doc)) {
    const d = doc as Record<string, unknown>
    d.listen ??= {}
    d.defaults ??= {}
    d.providers ??= {}
  }
  const validate = validator()
  if (!validate(doc)) {
    const first = firstError(validate.errors)
    throw new ConfigError(first ? describeSchemaError(file, first) : `${file}: invalid`)
  }
  const config = doc
  for (const [key, value] of [
    ['defaults.workspace', config.defaults.workspace],
    ['defaults.agent', config.defaults.agent],
  ] as const) {
    const problem = checkName(key === 'defaults.agent' ? 'agent' : 'workspace', value)
    if (problem) throw new ConfigError(`${file}: ${key}: ${problem}`)
  }
  for (const name of Object.keys(config.providers)) {
    if (!/^[A-Za-z0-9_.-]+$/.test(name)) {
      throw new ConfigError(
        `${file}: providers: row name ${JSON.stringify(name)} must be letters, digits, _ . -`,
      )
    }
  }
  return config
}

/** Set when the last `loadConfig` wrote a new `holdfast.yaml` (serve says where). */
export let wroteDefaultConfig: string | undefined

/** Read `<home>/holdfast.yaml`, writing the defaults first when it is absent. */
export function loadConfig(home: string): HoldfastConfig {
  wroteDefaultConfig = undefined
  const file = homePaths.config(home)
  let text: string
  try {
    text = fs.readFileSync(file, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new ConfigError(`${file}: cannot be read: ${(err as Error).message}`)
    }
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 })
    fs.writeFileSync(file, DEFAULT_CONFIG_YAML, { flag: 'wx', mode: 0o600 })
    wroteDefaultConfig = file
    text = DEFAULT_CONFIG_YAML
  }
  return parseConfig(text, file)
}

/** The configured token, which every request must then carry: `HOLDFAST_TOKEN` wins over the file. */
export function configuredToken(config: HoldfastConfig): string | undefined {
  return process.env.HOLDFAST_TOKEN || config.token || undefined
}
