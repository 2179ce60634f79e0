/**
 * Where plugin modules come from: a package's entry file (resolved from the home directory, then
 * from holdfast's own node_modules; ESM-only packages through their `exports`), and a file
 * imported with a real `import()` of its `file://` URL. Invariant: a failure is a
 * PluginLoadError of one line naming the plugin (its path or package when it did not load).
 */
import fs from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { PACKAGE_ROOT } from '../proxy/process/package-root'
import { type AnyPlugin, checkDefinition, PluginLoadError } from './instance'

/** TypeScript compiles `import()` to `require()` under CommonJS; this stays a real import. */
const dynamicImport = new Function('url', 'return import(url)') as (url: string) => Promise<unknown>

const EXTENSIONS = ['.js', '.mjs', '.cjs']
const HOLDFAST_ROOT = PACKAGE_ROOT

/** The entry file an `exports` value points at for `import` (or `default`, or `node`). */
function exportTarget(v: unknown): string | undefined {
  if (typeof v === 'string') return v
  if (!v || typeof v !== 'object') return undefined
  const o = v as Record<string, unknown>
  return exportTarget(o['.'] ?? o.import ?? o.node ?? o.default)
}

/** An ESM-only package (its `exports` has no `require` condition): read its package.json. */
function esmEntry(name: string, from: string): string | undefined {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const pkgDir = path.join(dir, 'node_modules', name)
    if (fs.existsSync(path.join(pkgDir, 'package.json'))) {
      const pkg = JSON.parse(fs.readFileSync(path.join(pkgDir, 'package.json'), 'utf8')) as {
        exports?: unknown
        main?: string
      }
      return path.join(pkgDir, exportTarget(pkg.exports) ?? pkg.main ?? 'index.js')
    }
    if (path.dirname(dir) === dir) return undefined
  }
}

/** A package's entry file, from the home directory first, then from holdfast's own. */
export function resolvePackage(name: string, home: string): string {
  for (const from of [home, HOLDFAST_ROOT]) {
    try {
      return createRequire(path.join(from, 'package.json')).resolve(name)
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code
      if (code === 'ERR_PACKAGE_PATH_NOT_EXPORTED') {
        const file = esmEntry(name, from)
        if (file) return file
      } else if (code !== 'MODULE_NOT_FOUND') {
        throw new PluginLoadError(`plugin ${name}: cannot be resolved: ${(err as Error).message}`)
      }
    }
  }
  throw new PluginLoadError(
    `plugin ${name}: no built-in of that name, and no package "${name}" is installed in ${home} or beside holdfast`,
  )
}

/** Import a plugin file; `version` > 0 gives a fresh module URL (a reload). */
export async function importDefinition(file: string, label: string, version = 0): Promise<AnyPlugin> {
  if (!EXTENSIONS.includes(path.extname(file)))
    throw new PluginLoadError(
      `plugin ${label}: a plugin file must be .js, .mjs or .cjs (Node 20 cannot load .ts)`,
    )
  if (!fs.existsSync(file)) throw new PluginLoadError(`plugin ${label}: no such file`)
  // A CommonJS file imported again is served from require's cache, query or not.
  if (require.cache) delete require.cache[file]
  let mod: unknown
  try {
    mod = await dynamicImport(pathToFileURL(file).href + (version > 0 ? `?reload=${version}` : ''))
  } catch (err) {
    const first = ((err as Error)?.message ?? String(err)).split('\n')[0]
    throw new PluginLoadError(`plugin ${label}: cannot be loaded: ${first}`, { cause: err })
  }
  const m = mod as { default?: unknown }
  return checkDefinition(m.default ?? m, label)
}
