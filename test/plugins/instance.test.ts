/**
 * plugins/instance.ts, from a definition to a running instance: the definition's shape checked
 * (a CommonJS `exports.default` unwrapped, a usable name, apiVersion, setup, optionsSchema),
 * options validated on a copy with defaults filled in, `setup` run with a frozen context whose
 * `dataDir` is made on first read, its hooks checked against the closed list; every refusal one
 * line `plugin <name>: <reason>`. `runPlugin` does the same without a server; `pinoLog` puts a
 * plugin's fields first, the way pino wants them.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Writable } from 'node:stream'
import pino from 'pino'
import type { Hooks } from '../../plugins/api'
import { exchange } from '../../plugins/exchange'
import {
  type AnyPlugin,
  checkDefinition,
  instantiate,
  pinoLog,
  PluginLoadError,
  runPlugin,
} from '../../plugins/instance'

const quiet = { debug() {}, info() {}, warn() {}, error() {} }
const ex = exchange({ body: { model: 'm', messages: [{ role: 'user', content: 'hi' }] } })
const def = (over: Partial<AnyPlugin> = {}): AnyPlugin => ({
  name: 'p',
  apiVersion: 1,
  setup: () => ({}),
  ...over,
})

let tmp: string
beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'holdfast-instance-'))
})
afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }))

const env = () => ({ dataDir: path.join(tmp, 'data', 'p'), log: quiet, source: 'test' })

/** The message `fn` throws (as a PluginLoadError). */
function loadError(fn: () => unknown): string {
  try {
    fn()
  } catch (err) {
    expect(err).toBeInstanceOf(PluginLoadError)
    return (err as Error).message
  }
  throw new Error('expected a PluginLoadError')
}

describe('checkDefinition', () => {
  it('accepts the definition as exported, or nested once more by a CommonJS `exports.default`', () => {
    const d = def()
    expect(checkDefinition(d, 'label')).toBe(d)
    expect(checkDefinition({ default: d }, 'label')).toBe(d)
  })

  it('names the label until the module has a usable name, then the name', () => {
    expect(loadError(() => checkDefinition(undefined, 'my/file.mjs'))).toBe(
      'plugin my/file.mjs: the module exports no plugin',
    )
    for (const name of [undefined, '', '-dash-first', 'has space', 'x'.repeat(65)]) {
      expect(loadError(() => checkDefinition(def({ name: name as string }), 'f.js'))).toMatch(
        /^plugin f\.js: name .* is not usable \(letters, digits, "\.", "_", "-"; at most 64\)$/,
      )
    }
    expect(checkDefinition(def({ name: `a${'b'.repeat(63)}` }), 'f.js').name).toHaveLength(64)
    expect(loadError(() => checkDefinition(def({ apiVersion: '1' as never }), 'f.js'))).toBe(
      'plugin p: apiVersion "1" is not supported (this holdfast speaks apiVersion 1)',
    )
    expect(loadError(() => checkDefinition(def({ setup: 'no' as never }), 'f.js'))).toBe(
      'plugin p: setup is not a function',
    )
    expect(loadError(() => checkDefinition(def({ optionsSchema: null as never }), 'f.js'))).toBe(
      'plugin p: optionsSchema is not a JSON Schema object',
    )
  })
})

describe('instantiate: options', () => {
  const schema = {
    type: 'object',
    additionalProperties: false,
    properties: { limit: { type: 'integer', minimum: 1, default: 5 }, tags: { type: 'array', default: [] } },
  }

  it('validates options on a copy, fills in defaults, and hands setup the result', async () => {
    let got: unknown
    const given = { tags: ['a'] }
    const p = await instantiate(
      def({ optionsSchema: schema, setup: ({ options }) => void (got = options) }),
      given,
      env(),
    )
    expect(got).toEqual({ limit: 5, tags: ['a'] })
    expect(p.options).toBe(got)
    expect(given).toEqual({ tags: ['a'] }) // the caller's object is not filled in
    expect((await instantiate(def({ optionsSchema: schema }), undefined, env())).options).toEqual({
      limit: 5,
      tags: [],
    })
  })

  it('refuses options that fail the schema, options that are not an object, and a schema that does not compile', async () => {
    await expect(instantiate(def({ optionsSchema: schema }), { limit: 0 }, env())).rejects.toThrow(
      'plugin p: options: limit: must be >= 1',
    )
    await expect(instantiate(def(), ['a'], env())).rejects.toThrow('plugin p: options must be an object')
    await expect(instantiate(def({ optionsSchema: { type: 'nonsense' } }), {}, env())).rejects.toThrow(
      /^plugin p: optionsSchema does not compile: /,
    )
  })

  it('compiles each schema on its own: two plugins may carry the same $id (a reload does)', async () => {
    const withId = def({ optionsSchema: { $id: 'https://example.com/options.json', type: 'object' } })
    await instantiate(withId, {}, env())
    await expect(instantiate(withId, {}, env())).resolves.toMatchObject({ name: 'p' })
  })
})

describe('instantiate: setup and its hooks', () => {
  it('gives setup a frozen context whose dataDir is made (mode 0700) only when read', async () => {
    const dir = path.join(tmp, 'data', 'lazy')
    let frozen = false
    await instantiate(
      def({
        setup(ctx) {
          frozen = Object.isFrozen(ctx)
        },
      }),
      {},
      { ...env(), dataDir: dir },
    )
    expect([frozen, fs.existsSync(dir)]).toEqual([true, false])
    await instantiate(def({ setup: (ctx) => void ctx.dataDir }), {}, { ...env(), dataDir: dir })
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700)
  })

  it('refuses a setup that throws or rejects, keeping the cause, and one that returns a non-object', async () => {
    const boom = new Error('no database')
    const thrown = (await instantiate(
      def({
        setup: () => {
          throw boom
        },
      }),
      {},
      env(),
    ).then(
      () => undefined,
      (e: unknown) => e,
    )) as PluginLoadError
    expect([thrown.message, thrown.cause]).toEqual(['plugin p: setup threw: no database', boom])
    await expect(
      instantiate(def({ setup: () => Promise.reject(new Error('later')) }), {}, env()),
    ).rejects.toThrow('plugin p: setup threw: later')
    await expect(instantiate(def({ setup: () => 'hooks' as never }), {}, env())).rejects.toThrow(
      'plugin p: setup returned no hooks object',
    )
  })

  it('takes a setup that returns nothing as no hooks, and refuses an unknown hook or a hook that is not a function', async () => {
    expect((await instantiate(def({ setup: () => undefined }), {}, env())).hooks).toEqual({})
    await expect(instantiate(def({ setup: () => ({ onRequest() {} }) as never }), {}, env())).rejects.toThrow(
      'plugin p: setup returned an unknown hook "onRequest" (hooks are identify, route, onResponse, onError, close)',
    )
    await expect(instantiate(def({ setup: () => ({ route: 'long' }) as never }), {}, env())).rejects.toThrow(
      'plugin p: hook route is not a function',
    )
  })
})

describe('runPlugin', () => {
  it('answers undefined for a hook the plugin lacks, checks decisions, and calls hooks on their object', async () => {
    const hooks = {
      route(this: { prefix: string }) {
        return { model: `${this.prefix}x` }
      },
      identify: () => ({ agnet: 'typo' }),
    }
    // Not enumerable: setup's hooks object may hold only hooks, but a hook may read its object.
    Object.defineProperty(hooks, 'prefix', { value: 'm-', enumerable: false })
    const p = runPlugin(def({ setup: () => hooks as Hooks }))
    expect(await p.route(ex)).toEqual({ model: 'm-x' })
    await expect(p.identify(ex)).rejects.toThrow('plugin p (identify) returned an unknown key "agnet"')
    await expect(p.onResponse(ex)).resolves.toBeUndefined()
    await expect(p.close()).resolves.toBeUndefined()
  })

  it('surfaces a setup failure at the first hook call, not at construction', async () => {
    const p = runPlugin(def({ setup: () => Promise.reject(new Error('late')) }))
    await expect(p.route(ex)).rejects.toThrow('plugin p: setup threw: late')
  })

  it('records what the plugin logged, in order, fields only when given; dataDir is the one asked for', async () => {
    const dataDir = path.join(tmp, 'mine')
    const p = runPlugin(
      def({
        setup(ctx) {
          ctx.log.info('ready')
          ctx.log.warn('dir', { dir: ctx.dataDir })
          return { onError: (_e, err) => ctx.log.error('failed', { code: err.code }) }
        },
      }),
      undefined,
      { dataDir },
    )
    await p.onError(ex, { code: 'PLUGIN_FAILED', message: 'x' })
    expect(p.logs).toEqual([
      { level: 'info', msg: 'ready' },
      { level: 'warn', msg: 'dir', fields: { dir: dataDir } },
      { level: 'error', msg: 'failed', fields: { code: 'PLUGIN_FAILED' } },
    ])
    expect(fs.existsSync(dataDir)).toBe(true)
  })

  it('refuses a bad definition at once, as holdfast would at start', () => {
    expect(() => runPlugin(def({ name: '../x' }))).toThrow('plugin ../x: name "../x" is not usable')
  })
})

describe('pinoLog', () => {
  it("writes the message with the plugin's name and its fields, at the level asked", () => {
    const lines: Record<string, unknown>[] = []
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>)
        done()
      },
    })
    const log = pinoLog(pino({ level: 'debug' }, sink), 'tagger')
    log.debug('d')
    log.warn('w', { n: 1 })
    expect(lines.map(({ level, msg, plugin, n }) => ({ level, msg, plugin, n }))).toEqual([
      { level: 20, msg: 'd', plugin: 'tagger', n: undefined },
      { level: 40, msg: 'w', plugin: 'tagger', n: 1 },
    ])
  })
})
