/**
 * Where holdfast's own files are: the package root (package.json, schemas/, scripts/), found
 * by walking up from this module, so the same code works from sources (`proxy/`) and from the
 * build (`dist/proxy/`), which sit at different depths. Invariant: computed once, at load.
 */
import fs from 'node:fs'
import path from 'node:path'

function findRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir
    if (path.dirname(dir) === dir) throw new Error(`holdfast's package.json was not found above ${from}`)
  }
}

export const PACKAGE_ROOT = findRoot(__dirname)

/** `scripts/register.js`: the swc require hook a child process needs to run from sources. */
export const SOURCE_REGISTER = path.join(PACKAGE_ROOT, 'scripts', 'register.js')

/**
 * How a child starts this holdfast's CLI: node and the built entry, or from sources (tests) node
 * with the swc register hook and `cli/entry.ts`. For commands baked into another program's
 * configuration (the git hook, Claude Code's status line).
 */
export function selfArgv(): string[] {
  const ext = path.extname(__filename)
  const entry = path.join(__dirname, '..', '..', 'cli', `entry${ext}`)
  if (ext !== '.ts') return [process.execPath, entry]
  return [process.execPath, '-r', SOURCE_REGISTER, entry]
}

/** holdfast's version, from its package.json. */
export function packageVersion(): string {
  return (JSON.parse(fs.readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string })
    .version
}
