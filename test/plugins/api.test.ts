/**
 * plugins/api.ts, the public plugin contract: `definePlugin` is a typed identity (a plain object of
 * the same shape is accepted too), `apiVersion` is 1 and nothing else starts, `HOOK_NAMES` is the
 * closed list of hooks in lifecycle order, the context `setup` receives (name, validated options,
 * log, `dataDir` = `<home>/plugins/<name>/`), and, at the type level, a read-only exchange and
 * typed options (checked by `tsc`, which type-checks test/).
 */
import fs from 'node:fs'
import path from 'node:path'
import {
  apiVersion,
  definePlugin,
  type DeepReadonly,
  type Exchange,
  HOOK_NAMES,
  type PluginContext,
} from '../../plugins/api'
import { exchange } from '../../plugins/exchange'
import { runPlugin } from '../../plugins/instance'
import { silentLogger } from '../../proxy/process/log'
import { startServer } from '../../proxy/serve'
import type { FakeUpstream } from '../support/fake-upstream'
import { configFor, tempHome, writeConfig } from '../support/harness'

const ex = exchange({ body: { model: 'm', messages: [{ role: 'user', content: 'hi' }] } })

describe('definePlugin', () => {
  it('returns the very definition it is given, so a plain object of the same shape behaves the same', async () => {
    const plain = { name: 'same', apiVersion, setup: () => ({ route: () => ({ model: 'chosen' }) }) }
    const defined = definePlugin(plain)
    expect(defined).toBe(plain)
    expect(await runPlugin(defined).route(ex)).toEqual({ model: 'chosen' })
    expect(await runPlugin(plain).route(ex)).toEqual({ model: 'chosen' })
  })
})

describe('apiVersion', () => {
  it('is 1, and a plugin declaring any other version is refused at start', async () => {
    expect(apiVersion).toBe(1)
    const future = { name: 'future', apiVersion: 2, setup: () => ({}) } as never
    expect(() => runPlugin(future)).toThrow(
      'plugin future: apiVersion 2 is not supported (this holdfast speaks apiVersion 1)',
    )
  })
})

describe('HOOK_NAMES', () => {
  it('lists the five hooks in lifecycle order: the deciding ones, the observing ones, then close', () => {
    expect(HOOK_NAMES).toEqual(['identify', 'route', 'onResponse', 'onError', 'close'])
  })

  it('is the closed list setup may return: every listed hook is accepted, any other name refused', async () => {
    const all = Object.fromEntries(HOOK_NAMES.map((h) => [h, () => undefined]))
    const ok = runPlugin({ name: 'all', apiVersion, setup: () => all })
    await expect(ok.close()).resolves.toBeUndefined()
    const extra = runPlugin({
      name: 'extra',
      apiVersion,
      setup: () => ({ ...all, onStart: () => {} }) as never,
    })
    await expect(extra.identify(ex)).rejects.toThrow(
      `plugin extra: setup returned an unknown hook "onStart" (hooks are ${HOOK_NAMES.join(', ')})`,
    )
  })
})

describe('the context setup receives', () => {
  it('names the plugin, carries the validated options with defaults, and gives <home>/plugins/<name>/ as dataDir', async () => {
    const nowhere = { anthropicBaseUrl: 'http://127.0.0.1:9', openaiBaseUrl: 'http://127.0.0.1:9/v1' }
    const home = tempHome()
    let seen: PluginContext<{ limit: number; mode: string }> | undefined
    let dirBefore = true
    const probe = definePlugin<{ limit: number; mode: string }>({
      name: 'probe',
      apiVersion,
      optionsSchema: {
        type: 'object',
        properties: { limit: { type: 'integer' }, mode: { type: 'string', default: 'fast' } },
      },
      setup(ctx) {
        seen = ctx
        dirBefore = fs.existsSync(path.join(home, 'plugins', 'probe'))
        fs.writeFileSync(path.join(ctx.dataDir, 'state'), 'x')
        ctx.log.info('started', { limit: ctx.options.limit })
      },
    })
    try {
      writeConfig(
        home,
        configFor(nowhere as FakeUpstream, { plugins: [{ package: 'probe', options: { limit: 3 } }] }),
      )
      const s = await startServer({ home, log: silentLogger(), port: 0, plugins: { probe } })
      await s.close()
      expect(seen?.name).toBe('probe')
      expect(seen?.options).toEqual({ limit: 3, mode: 'fast' })
      expect(dirBefore).toBe(false) // created on first read, not before
      expect(seen?.dataDir).toBe(path.join(home, 'plugins', 'probe'))
      expect(fs.readFileSync(path.join(home, 'plugins', 'probe', 'state'), 'utf8')).toBe('x')
      expect(Object.isFrozen(seen)).toBe(true)
    } finally {
      fs.rmSync(home, { recursive: true, force: true })
    }
  })
})

describe('the types a plugin author writes against', () => {
  it('make the exchange read-only at compile time and type the options (checked by tsc)', () => {
    // Never called: `tsc --noEmit` fails if any line marked @ts-expect-error stops being an error.
    const compileOnly = (e: Exchange, body: DeepReadonly<{ messages: { content: string }[] }>) => {
      // @ts-expect-error the body is read-only
      e.body.model = 'x'
      // @ts-expect-error read-only all the way down
      body.messages[0]!.content = 'x'
      // @ts-expect-error arrays lose their mutators
      body.messages.push({ content: 'x' })
      // @ts-expect-error the view's fields are read-only
      e.agent = 'other'
      definePlugin<{ threshold: number }>({
        name: 't',
        apiVersion: 1,
        // @ts-expect-error options are typed from the definition's type parameter
        setup: ({ options }) => void options.threshhold,
      })
      // @ts-expect-error only apiVersion 1 type-checks
      definePlugin({ name: 't', apiVersion: 2, setup: () => undefined })
    }
    expect(typeof compileOnly).toBe('function')
    // At run time the same writes throw (the view is a read-only proxy).
    expect(() => ((ex.body as { model: string }).model = 'x')).toThrow(/read-only/)
  })
})
