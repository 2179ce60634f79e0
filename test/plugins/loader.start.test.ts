/**
 * A plugin that cannot start stops the start with one line naming it and the reason (plugin
 * objects in-process; files and packages are covered through the spawned CLI in loader.test.ts),
 * and the home is left free to start again.
 */
import fs from 'node:fs'
import type { AnyPlugin } from '../../plugins/instance'
import { silentLogger } from '../../proxy/process/log'
import { startServer } from '../../proxy/serve'
import type { FakeUpstream } from '../support/fake-upstream'
import { configFor, tempHome, writeConfig } from '../support/harness'

const nowhere = {
  anthropicBaseUrl: 'http://127.0.0.1:9',
  openaiBaseUrl: 'http://127.0.0.1:9/v1',
} as FakeUpstream
const closed: string[] = []
const ok: AnyPlugin = { name: 'ok', apiVersion: 1, setup: () => ({ close: () => void closed.push('ok') }) }
const strict: AnyPlugin = {
  name: 'strict',
  apiVersion: 1,
  optionsSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['limit'],
    properties: { limit: { type: 'integer', minimum: 1 }, mode: { enum: ['a', 'b'], default: 'a' } },
  },
  setup: ({ options }) => ({
    route: () => ({ model: `m-${String(options.limit)}-${String(options.mode)}` }),
  }),
}

async function startWith(
  plugins: unknown[],
  builtins: Record<string, AnyPlugin>,
): Promise<{ error?: string; names?: string[]; options?: unknown[] }> {
  const home = tempHome()
  writeConfig(home, configFor(nowhere, { plugins: plugins as never }))
  try {
    const s = await startServer({ home, log: silentLogger(), port: 0, plugins: builtins })
    const names = s.ctx.plugins.plugins.map((p) => p.name)
    const options = s.ctx.plugins.plugins.map((p) => p.options)
    await s.close()
    return names.length > 0 ? { names, options } : { names }
  } catch (err) {
    // The lock was released: the same home starts again without the plugin.
    writeConfig(home, configFor(nowhere, { plugins: [] }))
    await (await startServer({ home, log: silentLogger(), port: 0 })).close()
    return { error: (err as Error).message }
  } finally {
    fs.rmSync(home, { recursive: true, force: true })
  }
}

describe('a plugin that cannot start', () => {
  it('stops the start when its options fail its schema, naming the plugin and the option', async () => {
    expect(await startWith([{ package: 'strict', options: {} }], { strict })).toEqual({
      error: 'plugin strict: options: missing option "limit"',
    })
    expect(await startWith([{ package: 'strict', options: { limit: 0 } }], { strict })).toEqual({
      error: 'plugin strict: options: limit: must be >= 1',
    })
    expect(await startWith([{ package: 'strict', options: { limit: 1, mdoe: 'b' } }], { strict })).toEqual({
      error: 'plugin strict: options: unknown option "mdoe" at (top level)',
    })
  })

  it('stops the start for a wrong apiVersion, a throwing setup, an unknown hook, or a name listed twice', async () => {
    const cases: [AnyPlugin, string][] = [
      [
        { ...ok, apiVersion: 2 as never },
        'plugin ok: apiVersion 2 is not supported (this holdfast speaks apiVersion 1)',
      ],
      [
        {
          ...ok,
          setup: () => {
            throw new Error('no database')
          },
        },
        'plugin ok: setup threw: no database',
      ],
      [
        { ...ok, setup: () => ({ onRequest: () => undefined }) as never },
        'plugin ok: setup returned an unknown hook "onRequest" (hooks are identify, route, onResponse, onError, close)',
      ],
    ]
    for (const [plugin, error] of cases) expect(await startWith(['ok'], { ok: plugin })).toEqual({ error })
    expect(await startWith(['ok', 'again'], { ok, again: ok })).toEqual({
      error: 'plugin ok: listed twice (a name runs once in the chain)',
    })
  })

  it('closes the plugins that had started when a later one fails', async () => {
    closed.length = 0
    await startWith(['ok', { package: 'strict', options: {} }], { ok, strict })
    expect(closed).toEqual(['ok'])
  })
})

describe('a plugin entry that resolves to nothing loadable', () => {
  it('stops the start naming the entry: a .ts file, a missing file, an unknown package', async () => {
    const r = await Promise.all([
      startWith([{ path: '/nowhere/p.ts' }], {}),
      startWith([{ path: '/nowhere/p.mjs' }], {}),
      startWith(['holdfast-plugin-nope'], {}),
    ])
    expect(r.map((x) => x.error?.replace(/installed in \S+ or/, 'installed in <home> or'))).toEqual([
      'plugin /nowhere/p.ts: a plugin file must be .js, .mjs or .cjs (Node 20 cannot load .ts)',
      'plugin /nowhere/p.mjs: no such file',
      'plugin holdfast-plugin-nope: no built-in of that name, and no package "holdfast-plugin-nope" is installed in <home> or beside holdfast',
    ])
  })
})

describe('the plugins: list', () => {
  it('runs claude-code alone when absent, none for [], and fills option defaults', async () => {
    const home = tempHome()
    try {
      writeConfig(home, configFor(nowhere))
      const s = await startServer({ home, log: silentLogger(), port: 0 })
      expect(s.ctx.plugins.plugins.map((p) => p.name)).toEqual(['claude-code'])
      await s.close()
    } finally {
      fs.rmSync(home, { recursive: true, force: true })
    }
    expect(await startWith([], {})).toEqual({ names: [] })
    const listed = await startWith([{ package: 'strict', options: { limit: 3 } }, 'claude-code'], { strict })
    expect(listed).toEqual({
      names: ['strict', 'claude-code'],
      options: [{ limit: 3, mode: 'a' }, expect.anything()],
    })
  })
})
