/**
 * Loading the plugins holdfast.yaml lists, in run order: built-ins by name, packages resolved
 * from the home directory and then from holdfast's own node_modules, files by path (relative to
 * the home). Files are `.js`/`.mjs`/`.cjs`, loaded with a real `import()` of a `file://` URL.
 * Invariant: any entry that fails stops the start with one line naming the plugin (its declared
 * name, or its path/package when it did not load) and the reason; nothing half-starts.
 */
import path from 'node:path'
import type { HoldfastConfig, PluginEntry } from '../generated/holdfast'
import type { Logger } from '../proxy/process/log'
import type { RecordsView } from './api'
import { BUILTINS } from './builtin'
import { PluginHost, closePlugin } from './runner'
import {
  type AnyPlugin,
  checkDefinition,
  instantiate,
  type LoadedPlugin,
  pinoLog,
  PluginLoadError,
} from './instance'
import { importDefinition, resolvePackage } from './modules'
import { watchPlugin } from './reload'

export interface Entry {
  kind: 'builtin' | 'package' | 'path'
  /** The built-in or package name, or the file's absolute path. */
  ref: string
  options: unknown
}

/** The entries in run order: `claude-code` first unless listed; absent → it alone; `[]` → none. */
function pluginEntries(
  config: Pick<HoldfastConfig, 'plugins'>,
  home: string,
  builtins: Readonly<Record<string, AnyPlugin>> = BUILTINS,
): Entry[] {
  const list: PluginEntry[] = config.plugins ?? ['claude-code']
  const entries = list.map((e): Entry => {
    if (typeof e === 'string') return { kind: e in builtins ? 'builtin' : 'package', ref: e, options: {} }
    if ('path' in e) return { kind: 'path', ref: path.resolve(home, e.path), options: e.options ?? {} }
    return { kind: e.package in builtins ? 'builtin' : 'package', ref: e.package, options: e.options ?? {} }
  })
  const listed = entries.some((e) => e.kind === 'builtin' && e.ref === 'claude-code')
  if (list.length > 0 && !listed && 'claude-code' in builtins)
    entries.unshift({ kind: 'builtin', ref: 'claude-code', options: {} })
  return entries
}

/** The definition of one entry and the file it came from (none for a built-in). */
async function loadEntry(
  e: Entry,
  home: string,
  builtins: Readonly<Record<string, AnyPlugin>> = BUILTINS,
): Promise<{ definition: AnyPlugin; file?: string }> {
  if (e.kind === 'builtin') return { definition: checkDefinition(builtins[e.ref], e.ref) }
  const file = e.kind === 'path' ? e.ref : resolvePackage(e.ref, home)
  return { definition: await importDefinition(file, e.ref), file }
}

const dataDirOf = (home: string, name: string): string => path.join(home, 'plugins', name)

export interface LoadOptions {
  home: string
  config: Pick<HoldfastConfig, 'plugins'>
  log: Logger
  /** Extra built-ins by name (tests): plugin objects, no module loading. */
  builtins?: Readonly<Record<string, AnyPlugin>>
  /** Watch plugin files and reload them when they change (default true). */
  watch?: boolean
  /** What plugins may read of the records (default: none). */
  records?: RecordsView
}

/** Load, validate and set up every entry, in order; on any failure, close what started and throw. */
export async function loadPlugins(opts: LoadOptions): Promise<PluginHost> {
  const builtins = { ...BUILTINS, ...opts.builtins }
  const loaded: { plugin: LoadedPlugin; entry: Entry; file?: string }[] = []
  try {
    for (const entry of pluginEntries(opts.config, opts.home, builtins)) {
      const { definition, file } = await loadEntry(entry, opts.home, builtins)
      if (loaded.some((l) => l.plugin.name === definition.name))
        throw new PluginLoadError(`plugin ${definition.name}: listed twice (a name runs once in the chain)`)
      const plugin = await instantiate(definition, entry.options, {
        dataDir: dataDirOf(opts.home, definition.name),
        log: pinoLog(opts.log, definition.name),
        source: file ?? `builtin:${entry.ref}`,
        records: opts.records,
      })
      loaded.push({ plugin, entry, ...(file ? { file } : {}) })
    }
  } catch (err) {
    for (const l of loaded.reverse()) await closePlugin(l.plugin, opts.log)
    throw err
  }
  const host = new PluginHost(
    loaded.map((l) => l.plugin),
    opts.log,
  )
  for (const l of loaded) {
    if (l.file && opts.watch !== false)
      watchPlugin(host, {
        file: l.file,
        options: l.entry.options,
        dataDir: dataDirOf(opts.home, l.plugin.name),
        log: opts.log,
        records: opts.records,
      })
  }
  opts.log.debug({ plugins: loaded.map((l) => l.plugin.name) }, 'plugins loaded')
  return host
}

/**
 * One plugin for `holdfast replay` and `holdfast types`: `arg` is a built-in or package name, a
 * file (relative to the working directory), or the declared name of a plugin holdfast.yaml lists.
 * A listed plugin comes with its configured options; any other with none.
 */
export async function loadOne(
  arg: string,
  home: string,
  config: Pick<HoldfastConfig, 'plugins'>,
  cwd = process.cwd(),
): Promise<{ definition: AnyPlugin; options: unknown; source: string }> {
  const entries = pluginEntries(config, home)
  const isPath = /[\\/]/.test(arg) || /\.(c|m)?js$/.test(arg)
  const ref = isPath ? path.resolve(cwd, arg) : arg
  let entry = entries.find((e) => e.ref === ref)
  if (!entry && !isPath && !(arg in BUILTINS)) {
    try {
      resolvePackage(arg, home)
    } catch (err) {
      for (const e of entries.filter((x) => x.kind !== 'builtin')) {
        const found = await loadEntry(e, home).catch(() => undefined) // unloadable: not this one
        if (found?.definition.name === arg)
          return { definition: found.definition, options: e.options, source: found.file ?? e.ref }
      }
      throw err
    }
  }
  entry ??= { kind: isPath ? 'path' : arg in BUILTINS ? 'builtin' : 'package', ref, options: {} }
  const { definition, file } = await loadEntry(entry, home)
  return { definition, options: entry.options, source: file ?? `builtin:${ref}` }
}
