/**
 * From a plugin definition to a running instance: the shape and `apiVersion` checked, options
 * validated with ajv against `optionsSchema` (defaults filled in), `setup` run, its hooks checked
 * against the closed list. `runPlugin` does the same for plugin tests, with no server.
 * Invariant: every refusal is one line, `plugin <name>: <reason>`; nothing half-starts.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import Ajv from 'ajv'
import { describeSchemaError, firstError } from '../proxy/store/config/schemas'
import type { Logger } from 'pino'
import {
  apiVersion,
  type Exchange,
  type FailureView,
  HOOK_NAMES,
  type Hooks,
  type IdentifyDecision,
  type PluginDefinition,
  type PluginLog,
  type RecordsView,
  type RouteDecision,
} from './api'
import { checkIdentify, checkRoute } from './decisions'

/** A plugin that failed to load, validate or set up; the message is the one line to print. */
export class PluginLoadError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'PluginLoadError'
  }
}

// The definition's type parameter is erased here: options were validated against its own schema.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyPlugin = PluginDefinition<any>

export interface LoadedPlugin {
  readonly name: string
  /** `builtin:<name>`, `package:<name>` or the file's absolute path. */
  readonly source: string
  readonly definition: AnyPlugin
  readonly options: Record<string, unknown>
  readonly hooks: Hooks
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/

/** The definition a module exported (`default`, or CommonJS `module.exports`), checked. */
export function checkDefinition(value: unknown, label: string): AnyPlugin {
  let v = value as Record<string, unknown> | null
  // A CommonJS module with `exports.default = …` arrives as { default: { default: … } }.
  if (v && typeof v === 'object' && !('setup' in v) && v.default && typeof v.default === 'object') {
    v = v.default as Record<string, unknown>
  }
  if (!v || typeof v !== 'object') throw new PluginLoadError(`plugin ${label}: the module exports no plugin`)
  const named = typeof v.name === 'string' && NAME.test(v.name) ? v.name : undefined
  if (!named) {
    throw new PluginLoadError(
      `plugin ${label}: name ${JSON.stringify(v.name)} is not usable (letters, digits, ".", "_", "-"; at most 64)`,
    )
  }
  if (v.apiVersion !== apiVersion) {
    throw new PluginLoadError(
      `plugin ${named}: apiVersion ${JSON.stringify(v.apiVersion)} is not supported (this holdfast speaks apiVersion ${apiVersion})`,
    )
  }
  if (typeof v.setup !== 'function') throw new PluginLoadError(`plugin ${named}: setup is not a function`)
  if (v.optionsSchema !== undefined && (typeof v.optionsSchema !== 'object' || v.optionsSchema === null)) {
    throw new PluginLoadError(`plugin ${named}: optionsSchema is not a JSON Schema object`)
  }
  return v as unknown as AnyPlugin
}

/** `options` validated against the plugin's schema, defaults filled in (on a copy). */
function validateOptions(def: AnyPlugin, options: unknown): Record<string, unknown> {
  const copy = structuredClone(options ?? {}) as Record<string, unknown>
  if (typeof copy !== 'object' || Array.isArray(copy))
    throw new PluginLoadError(`plugin ${def.name}: options must be an object`)
  if (!def.optionsSchema) return copy
  let check
  try {
    // Its own ajv, not the shared one: a reloaded plugin's schema may carry the same $id again.
    check = new Ajv({ allErrors: true, useDefaults: true, strict: false }).compile(def.optionsSchema)
  } catch (err) {
    throw new PluginLoadError(`plugin ${def.name}: optionsSchema does not compile: ${(err as Error).message}`)
  }
  if (!check(copy)) {
    const first = firstError(check.errors)
    const prefix = `plugin ${def.name}: options`
    throw new PluginLoadError(first ? describeSchemaError(prefix, first, 'option') : `${prefix}: invalid`)
  }
  return copy
}

/** A PluginLog over pino (fields first, as pino wants them). */
export function pinoLog(log: Logger, name: string): PluginLog {
  const child = log.child({ plugin: name })
  return {
    debug: (msg, fields) => child.debug(fields ?? {}, msg),
    info: (msg, fields) => child.info(fields ?? {}, msg),
    warn: (msg, fields) => child.warn(fields ?? {}, msg),
    error: (msg, fields) => child.error(fields ?? {}, msg),
  }
}

/** Records with nothing in them: what a plugin reads where no records are given (tests). */
export const NO_RECORDS: RecordsView = Object.freeze({ latestStep: () => Promise.resolve(undefined) })

/** Validate, run setup, check the hooks it returned. */
export async function instantiate(
  def: AnyPlugin,
  options: unknown,
  env: { dataDir: string; log: PluginLog; source: string; records?: RecordsView },
): Promise<LoadedPlugin> {
  const valid = validateOptions(def, options)
  let dirMade = false
  const ctx = Object.freeze({
    name: def.name,
    options: valid,
    log: env.log,
    records: env.records ?? NO_RECORDS,
    get dataDir() {
      if (!dirMade) fs.mkdirSync(env.dataDir, { recursive: true, mode: 0o700 })
      dirMade = true
      return env.dataDir
    },
  })
  let hooks: unknown
  try {
    hooks = await def.setup(ctx)
  } catch (err) {
    throw new PluginLoadError(`plugin ${def.name}: setup threw: ${(err as Error)?.message ?? String(err)}`, {
      cause: err,
    })
  }
  hooks ??= {}
  if (typeof hooks !== 'object')
    throw new PluginLoadError(`plugin ${def.name}: setup returned no hooks object`)
  for (const [key, fn] of Object.entries(hooks as object)) {
    if (!(HOOK_NAMES as readonly string[]).includes(key))
      throw new PluginLoadError(
        `plugin ${def.name}: setup returned an unknown hook "${key}" (hooks are ${HOOK_NAMES.join(', ')})`,
      )
    if (typeof fn !== 'function')
      throw new PluginLoadError(`plugin ${def.name}: hook ${key} is not a function`)
  }
  return { name: def.name, source: env.source, definition: def, options: valid, hooks: hooks as Hooks }
}

export interface LogLine {
  level: 'debug' | 'info' | 'warn' | 'error'
  msg: string
  fields?: Record<string, unknown>
}

export interface RunningPlugin {
  identify(ex: Exchange): Promise<IdentifyDecision | undefined>
  route(ex: Exchange): Promise<RouteDecision | undefined>
  onResponse(ex: Exchange): Promise<void>
  onError(ex: Exchange, err: FailureView): Promise<void>
  close(): Promise<void>
  /** What the plugin logged, in order. */
  readonly logs: LogLine[]
}

/**
 * A plugin set up as holdfast would (same checks, same option validation), for tests: no server.
 * A hook the plugin does not have answers `undefined`. `dataDir` defaults to a fresh temp dir;
 * `records` to records with no step in them.
 * @example
 * expect(await runPlugin(plugin, { threshold: 10 }).route(exchange({ body }))).toEqual({ role: 'long' })
 */
export function runPlugin<O>(
  plugin: PluginDefinition<O>,
  options?: O,
  env: { dataDir?: string; records?: RecordsView } = {},
): RunningPlugin {
  const logs: LogLine[] = []
  const at = (level: LogLine['level']) => (msg: string, fields?: Record<string, unknown>) =>
    void logs.push(fields ? { level, msg, fields } : { level, msg })
  const log: PluginLog = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }
  const def = checkDefinition(plugin, String((plugin as { name?: unknown })?.name))
  const dataDir =
    env.dataDir ?? path.join(os.tmpdir(), `holdfast-plugin-${def.name}-${process.pid}-${Date.now()}`)
  const ready = instantiate(def, options, { dataDir, log, source: 'runPlugin', records: env.records })
  ready.catch(() => undefined) // surfaced by the first hook call
  const hook =
    <K extends keyof Hooks>(k: K) =>
    async (...args: unknown[]): Promise<never> => {
      const p = await ready
      const fn = p.hooks[k] as ((...a: unknown[]) => unknown) | undefined
      const out = fn ? await fn.apply(p.hooks, args) : undefined
      if (k === 'identify') return checkIdentify(p.name, out) as never
      if (k === 'route') return checkRoute(p.name, out) as never
      return undefined as never
    }
  return {
    identify: hook('identify'),
    route: hook('route'),
    onResponse: hook('onResponse'),
    onError: hook('onError'),
    close: hook('close'),
    logs,
  }
}
