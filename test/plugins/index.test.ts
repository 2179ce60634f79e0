/**
 * plugins/index.ts, the package entry (`main` of package.json): it exports the plugin API and
 * nothing of the proxy — `apiVersion`, `definePlugin`, `HOOK_NAMES`, and for plugin tests
 * `exchange` and `runPlugin` — each the real function of its module, usable together the way the
 * plugins README shows; and requiring it loads no server, upstream or git code.
 */
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import * as entry from '../../plugins/index'
import * as api from '../../plugins/api'
import * as exchangeModule from '../../plugins/exchange'
import * as instance from '../../plugins/instance'
import type { PluginDefinition } from '../../plugins/index'
import { REGISTER, ROOT } from '../support/harness'
import { EXAMPLE } from './support'

describe('the package entry', () => {
  it('exports exactly the plugin API at run time (types aside): nothing of the proxy', () => {
    expect(Object.keys(entry).sort()).toEqual([
      'HOOK_NAMES',
      'apiVersion',
      'definePlugin',
      'exchange',
      'runPlugin',
    ])
  })

  it('re-exports the real functions and values, not copies', () => {
    expect(entry.definePlugin).toBe(api.definePlugin)
    expect(entry.apiVersion).toBe(api.apiVersion)
    expect(entry.HOOK_NAMES).toBe(api.HOOK_NAMES)
    expect(entry.exchange).toBe(exchangeModule.exchange)
    expect(entry.runPlugin).toBe(instance.runPlugin)
  })

  it("is the package's main and types, at the place the build puts plugins/index.ts", () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      main: string
      types: string
    }
    expect([pkg.main, pkg.types]).toEqual(['dist/plugins/index.js', 'dist/plugins/index.d.ts'])
  })
})

describe('what a plugin author does with it', () => {
  it("tests the tutorial's long-context plugin with runPlugin and exchange, options checked as holdfast checks them", async () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const longContext = require(EXAMPLE) as PluginDefinition<{ threshold?: number; role: string }>
    const long = entry.exchange({
      body: { model: 'm', messages: [{ role: 'user', content: 'x'.repeat(400) }] },
    })
    const short = entry.exchange({ body: { model: 'm', messages: [{ role: 'user', content: 'hi' }] } })
    const p = entry.runPlugin(longContext, { threshold: 50, role: 'long' })
    expect(await p.route(long)).toEqual({ role: 'long', why: expect.stringMatching(/^~\d+ tokens ≥ 50$/) })
    expect(await p.route(short)).toBeUndefined()
    expect(await p.identify(short)).toBeUndefined() // a hook it does not have answers nothing
    await expect(entry.runPlugin(longContext, { threshold: 50 } as never).route(short)).rejects.toThrow(
      'plugin long-context: options: missing option "role"',
    )
  })

  it('loads no server, upstream, logger or git code when required (a plugin test stays light)', () => {
    const probe = `require(${JSON.stringify(path.join(ROOT, 'plugins', 'index.ts'))});
      process.stdout.write(JSON.stringify(Object.keys(require.cache)))`
    const r = spawnSync(process.execPath, ['-r', REGISTER, '-e', probe], { cwd: ROOT, encoding: 'utf8' })
    expect(r.stderr).toBe('')
    const loaded = (JSON.parse(r.stdout) as string[]).map((f) => path.relative(ROOT, f))
    expect(loaded).toContain(path.join('plugins', 'instance.ts')) // the probe saw the entry's modules
    const heavy = loaded.filter((f) =>
      /^proxy\/(server|serve|upstream|pipeline|context|log)\.ts$|^proxy\/(store\/(git|commit)|record|stages|tools)|node_modules\/(undici|pino|isomorphic-git|simple-git|@modelcontextprotocol)\//.test(
        f,
      ),
    )
    expect(heavy).toEqual([])
  })
})
