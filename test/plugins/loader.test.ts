/**
 * Loading plugin modules, through the spawned CLI (a real `import()`, outside jest's module
 * system): .mjs, .cjs and .js files and an installed ESM-only package, in the listed order; hot
 * reload of a changed file (the old instance replaced in place, a broken change ignored); and
 * every way a plugin can fail to start, each one line naming the plugin.
 */
import { readJournal } from '../../proxy/record/journal/reader'
import fs from 'node:fs'
import path from 'node:path'
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream'
import { configFor, eventually, spawnServe, type Spawned, tempHome, writeConfig } from '../support/harness'
import { cliAsync } from '../support/repo-checks'
import { ask, post } from './support'

const identifyBy = (header: string, agent: string) =>
  `identify(ex) { const w = ex.headers['x-which']; if (w === '${header}' || w === 'both') return { agent: ${agent} } }`

const MJS = (v: string) =>
  `export default { name: 'from-mjs', apiVersion: 1, setup() { return { ${identifyBy('mjs', `'mjs-${v}'`)} } } }\n`
const CJS = (suffix: string) => `module.exports = {
  name: 'from-cjs',
  apiVersion: 1,
  optionsSchema: { type: 'object', required: ['agent'], properties: { agent: { type: 'string' } } },
  setup({ options }) { return { ${identifyBy('cjs', `options.agent + '${suffix}'`)} } },
}\n`
const JS = `const fs = require('node:fs')
exports.default = {
  name: 'from-js',
  apiVersion: 1,
  setup(ctx) { fs.writeFileSync(ctx.dataDir + '/started', 'yes'); return { ${identifyBy('js', `'js-v1'`)} } },
}\n`
const PKG = `export default { name: 'tag', apiVersion: 1, setup: () => ({
  route: (ex) => (ex.headers['x-which'] === 'pkg' ? { model: 'pkg-model' } : undefined),
}) }\n`

function write(file: string, text: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, text)
}

/** Save the way editors do: write a temporary file, then rename it over the original. */
function save(file: string, text: string): void {
  fs.writeFileSync(`${file}.tmp`, text)
  fs.renameSync(`${file}.tmp`, file)
}

let fake: FakeUpstream
let home: string
let serve: Spawned
const src = () => path.join(home, 'my-plugins')
const landed = (agent: string) => fs.existsSync(path.join(home, 'workspaces', 'load', 'journal', agent))
/** The agent's latest step number: the journal keeps its newest file even after its steps are committed. */
const steps = (agent: string) =>
  Math.max(...readJournal(path.join(home, 'workspaces', 'load', 'journal', agent)).steps.keys())

beforeAll(async () => {
  fake = await startFakeUpstream()
  home = tempHome()
  write(path.join(src(), 'a.mjs'), MJS('v1'))
  write(path.join(src(), 'b.cjs'), CJS(''))
  write(path.join(src(), 'c.js'), JS)
  const pkg = path.join(home, 'node_modules', 'holdfast-plugin-tag')
  write(
    path.join(pkg, 'package.json'),
    JSON.stringify({
      name: 'holdfast-plugin-tag',
      type: 'module',
      exports: { '.': { import: './index.js' } },
    }),
  )
  write(path.join(pkg, 'index.js'), PKG)
  const plugins = [
    { path: 'my-plugins/a.mjs' },
    { path: 'my-plugins/b.cjs', options: { agent: 'cjs-v1' } },
    { path: path.join(src(), 'c.js') },
    'holdfast-plugin-tag',
  ]
  writeConfig(home, configFor(fake, { plugins }))
  serve = await spawnServe(['--home', home, '--port', '0'], { HOLDFAST_TOKEN: '' })
})
afterAll(async () => {
  await serve?.kill()
  await fake.close()
  fs.rmSync(home, { recursive: true, force: true })
})

const send = async (which: string): Promise<void> => {
  expect((await post(`${serve.url}/w/load/a/main`, ask(which), { 'x-which': which })).status).toBe(200)
}

describe('plugin modules', () => {
  it('loads .mjs, .cjs and .js files and an ESM-only package from the home, in the listed order', async () => {
    for (const which of ['mjs', 'cjs', 'js', 'both', 'pkg']) await send(which)
    expect(['mjs-v1', 'cjs-v1', 'js-v1', 'main'].map(landed)).toEqual([true, true, true, true])
    expect(steps('mjs-v1')).toBe(2)
    expect(JSON.parse(fake.received.at(-1)?.body.toString() ?? '{}').model).toBe('pkg-model')
    expect(fs.readFileSync(path.join(home, 'plugins', 'from-js', 'started'), 'utf8')).toBe('yes')
  })

  it('reloads a changed file in place and closes nothing else; a broken change keeps the running instance', async () => {
    save(path.join(src(), 'b.cjs'), CJS('-v2'))
    await eventually(() => serve.stderr().includes('"msg":"plugin reloaded"'), 5000, 'the reload')
    await send('cjs')
    expect(landed('cjs-v1-v2')).toBe(true)
    await send('both') // still first in the chain: a.mjs answers before b.cjs
    expect(steps('mjs-v1')).toBe(3)

    save(path.join(src(), 'b.cjs'), 'module.exports = {{ broken')
    await eventually(() => serve.stderr().includes('plugin reload failed'), 5000, 'the failed reload')
    await send('cjs')
    expect(steps('cjs-v1-v2')).toBe(2)

    save(path.join(src(), 'a.mjs'), MJS('v2')) // an ES module gets a fresh URL per reload
    await eventually(
      () => serve.stderr().split('"msg":"plugin reloaded"').length === 3,
      5000,
      'the second reload',
    )
    await send('mjs')
    expect(landed('mjs-v2')).toBe(true)
  })
})

describe('a plugin module that cannot start', () => {
  it('stops serve with one line naming the plugin (its name, or its path when it did not load)', async () => {
    const homes: string[] = []
    const attempt = (files: Record<string, string>, entry: unknown) => {
      const h = tempHome()
      homes.push(h)
      for (const [name, text] of Object.entries(files)) write(path.join(h, name), text)
      writeConfig(h, configFor(fake, { plugins: [entry as never] }))
      return cliAsync(['serve', '--home', h, '--port', '0'], { HOLDFAST_TOKEN: '' }, 20_000)
    }
    const runs = await Promise.all([
      attempt({ 'v.mjs': MJS('x').replace('apiVersion: 1', 'apiVersion: 2') }, { path: 'v.mjs' }),
      attempt({ 'broken.mjs': 'export default {' }, { path: 'broken.mjs' }),
      attempt(
        {
          's.cjs': `module.exports = { name: 'thrower', apiVersion: 1, setup() { throw new Error('no db') } }`,
        },
        { path: 's.cjs' },
      ),
    ])
    const lines = runs.map((r, i) => {
      expect([r.code, r.stdout]).toEqual([1, ''])
      const l = r.stderr.trimEnd().split('\n')
      expect(l).toHaveLength(1)
      return l[0]!.replace(homes[i]!, '<home>')
    })
    for (const h of homes) fs.rmSync(h, { recursive: true, force: true })
    expect(lines).toEqual([
      'holdfast: plugin from-mjs: apiVersion 2 is not supported (this holdfast speaks apiVersion 1)',
      expect.stringMatching(/^holdfast: plugin <home>\/broken\.mjs: cannot be loaded: .+/) as unknown,
      'holdfast: plugin thrower: setup threw: no db',
    ])
  }, 30_000)
})
