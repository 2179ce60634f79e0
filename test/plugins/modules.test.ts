/**
 * plugins/modules.ts, where plugin modules come from: a package's entry resolved from the home
 * first, then from holdfast's own node_modules (an ESM-only package through its `exports`); a file
 * loaded with a real `import()` of its file:// URL (.mjs, .cjs, .js with `exports.default`), a
 * version > 0 giving a fresh module (a reload); every failure one PluginLoadError line naming the
 * plugin. Imports run in a child process: jest's module system cannot run a real `import()`.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { PluginLoadError } from '../../plugins/instance'
import { importDefinition } from '../../plugins/modules'
import { ROOT } from '../support/harness'
import { inChild, src } from './child.support'

let home: string
beforeEach(() => {
  home = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'holdfast-modules-')))
})
afterEach(() => fs.rmSync(home, { recursive: true, force: true }))

function write(rel: string, text: string): string {
  const file = path.join(home, rel)
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, text)
  return file
}

const pkg = (name: string, json: object, files: Record<string, string> = { 'index.js': '' }) => {
  write(`node_modules/${name}/package.json`, JSON.stringify({ name, ...json }))
  for (const [f, text] of Object.entries(files)) write(`node_modules/${name}/${f}`, text)
  return path.join(home, 'node_modules', name)
}

/** resolvePackage of each name from `home`, in a child process (jest replaces node's createRequire). */
function resolveAll(names: string[]): Promise<({ file: string } | { error: string })[]> {
  return inChild(`(() => {
    const { resolvePackage } = ${src('plugins/modules.ts')}
    const out = []
    for (const name of ${JSON.stringify(names)}) {
      try {
        out.push({ file: resolvePackage(name, ${JSON.stringify(home)}) })
      } catch (err) {
        out.push({ error: err.name + ': ' + err.message })
      }
    }
    process.stdout.write(JSON.stringify(out))
  })()`)
}

describe('resolvePackage', () => {
  it("prefers the home's package, then falls back to the one beside holdfast", async () => {
    // ajv is one of holdfast's own dependencies; once the home has a package of that name, it wins.
    const [theirs] = await resolveAll(['ajv'])
    expect(theirs).toEqual({ file: path.join(ROOT, 'node_modules', 'ajv', 'dist', 'ajv.js') })
    const mine = pkg('ajv', { main: 'mine.js' }, { 'mine.js': '' })
    expect(await resolveAll(['ajv'])).toEqual([{ file: path.join(mine, 'mine.js') }])
  })

  it('finds the entry of an ESM-only package (no require condition) through its exports, scoped names included', async () => {
    const nested = pkg('holdfast-plugin-esm', {
      type: 'module',
      exports: { '.': { import: './lib/entry.js' } },
    })
    const flat = pkg('@me/holdfast-plugin', { type: 'module', exports: { import: './esm.mjs' } })
    expect(await resolveAll(['holdfast-plugin-esm', '@me/holdfast-plugin'])).toEqual([
      { file: path.join(nested, 'lib', 'entry.js') },
      { file: path.join(flat, 'esm.mjs') },
    ])
  })

  it('refuses a package installed nowhere (naming both places it looked) and one that cannot be resolved', async () => {
    write('node_modules/broken/package.json', '{ nope')
    write('node_modules/broken/index.js', '')
    expect(await resolveAll(['holdfast-plugin-nope', 'broken'])).toEqual([
      {
        error: `PluginLoadError: plugin holdfast-plugin-nope: no built-in of that name, and no package "holdfast-plugin-nope" is installed in ${home} or beside holdfast`,
      },
      {
        error: expect.stringMatching(/^PluginLoadError: plugin broken: cannot be resolved: .*package\.json/),
      },
    ])
  })
})

describe('importDefinition refuses before importing', () => {
  it('a file that is not .js, .mjs or .cjs, and a file that does not exist', async () => {
    const ts = write('p.ts', 'export default {}')
    await expect(importDefinition(ts, 'p.ts')).rejects.toThrow(
      'plugin p.ts: a plugin file must be .js, .mjs or .cjs (Node 20 cannot load .ts)',
    )
    await expect(importDefinition(path.join(home, 'gone.mjs'), 'gone')).rejects.toThrow(
      new PluginLoadError('plugin gone: no such file'),
    )
  })
})

type Outcome = { name: string; tag?: string } | { error: string }

/** importDefinition of each [file, version] in order, in a child process; a failure is its message. */
function importAll(steps: { file: string; version?: number; write?: string }[]): Promise<Outcome[]> {
  return inChild(`(async () => {
    const fs = require('node:fs')
    const { importDefinition } = ${src('plugins/modules.ts')}
    const out = []
    for (const s of ${JSON.stringify(steps)}) {
      if (s.write !== undefined) fs.writeFileSync(s.file, s.write)
      try {
        const d = await importDefinition(s.file, require('node:path').basename(s.file), s.version)
        out.push(d.tag === undefined ? { name: d.name } : { name: d.name, tag: d.tag })
      } catch (err) {
        out.push({ error: err.name + ': ' + err.message })
      }
    }
    process.stdout.write(JSON.stringify(out))
  })()`)
}

describe('importDefinition with a real import()', () => {
  it('loads an ES module, a CommonJS module, and a .js file exporting exports.default', async () => {
    const files = [
      write('a.mjs', `export default { name: 'from-mjs', apiVersion: 1, setup() {} }\n`),
      write('b.cjs', `module.exports = { name: 'from-cjs', apiVersion: 1, setup() {} }\n`),
      write('c.js', `exports.default = { name: 'from-js', apiVersion: 1, setup() {} }\n`),
    ]
    expect(await importAll(files.map((file) => ({ file })))).toEqual([
      { name: 'from-mjs' },
      { name: 'from-cjs' },
      { name: 'from-js' },
    ])
  })

  it('refuses a module that does not load with the first line of the reason, and one that exports no plugin', async () => {
    const broken = write('broken.mjs', 'export default {\n')
    const empty = write('empty.mjs', 'export const x = 1\n')
    const [b, e] = await importAll([{ file: broken }, { file: empty }])
    expect(b).toEqual({
      error: expect.stringMatching(/^PluginLoadError: plugin broken\.mjs: cannot be loaded: [^\n]+$/),
    })
    expect(e).toEqual({
      error: expect.stringMatching(/^PluginLoadError: plugin empty\.mjs: name undefined is not usable/),
    })
  })

  it('gives a changed file a fresh module only under a new version (ES and CommonJS alike)', async () => {
    const mod = (tag: string) => `export default { name: 'r', tag: '${tag}', apiVersion: 1, setup() {} }\n`
    const cjs = (tag: string) => `module.exports = { name: 'r', tag: '${tag}', apiVersion: 1, setup() {} }\n`
    const m = write('r.mjs', mod('one'))
    const c = write('r.cjs', cjs('one'))
    expect(
      await importAll([
        { file: m },
        { file: m, write: mod('two') }, // the same URL: the module as first loaded
        { file: m, version: 1 },
        { file: c },
        { file: c, write: cjs('two'), version: 2 },
      ]),
    ).toEqual([
      { name: 'r', tag: 'one' },
      { name: 'r', tag: 'one' },
      { name: 'r', tag: 'two' },
      { name: 'r', tag: 'one' },
      { name: 'r', tag: 'two' },
    ])
  })
})
