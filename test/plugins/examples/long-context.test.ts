/**
 * The example plugin of the tutorial (plugins/examples/long-context): a request of at least
 * `threshold` approximate tokens goes to `role`, a shorter one falls through. Unit-tested with
 * runPlugin, then end to end through the spawned CLI: a long request reaches the fake upstream
 * with the role's model; `holdfast types --plugin-options` writes its options interface.
 */
import fs from 'node:fs'
import path from 'node:path'
import type { PluginDefinition } from '../../../plugins/api'
import { exchange } from '../../../plugins/exchange'
import { runPlugin } from '../../../plugins/instance'
import { setRole } from '../../../proxy/store/config/edit'
import { Workspace } from '../../../proxy/store/workspace'
import { startFakeUpstream } from '../../support/fake-upstream'
import {
  cli,
  configFor,
  eventually,
  git,
  ROOT,
  spawnServe,
  tempHome,
  writeConfig,
} from '../../support/harness'
import { cliAsync } from '../../support/repo-checks'
import { ask, EXAMPLE, meta, post } from '../support'

type Options = { threshold: number; role: string }
// The example is plain CommonJS; here jest loads it as a value under test (holdfast itself imports it).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const longContext = require(EXAMPLE) as PluginDefinition<Options>

const words = (n: number) => Array.from({ length: n }, (_, i) => `word${i}`).join(' ')

describe('long-context (unit, runPlugin)', () => {
  it('routes a request at or over the threshold to the role, and says why', async () => {
    const plugin = runPlugin(longContext, { threshold: 100, role: 'long' })
    const long = exchange({ body: ask(words(100)) })
    expect(await plugin.route(long)).toEqual({
      role: 'long',
      why: `~${long.summary.approxTokens} tokens ≥ 100`,
    })
  })

  it('lets a shorter request fall through to the next plugin', async () => {
    expect(
      await runPlugin(longContext, { threshold: 100, role: 'long' }).route(exchange({ body: ask('hi') })),
    ).toBe(undefined)
  })

  it('needs a role; the threshold defaults to 100000 tokens', async () => {
    await expect(runPlugin(longContext, {} as Options).route(exchange({ body: ask('hi') }))).rejects.toThrow(
      'plugin long-context: options: missing option "role"',
    )
    const big = exchange({ body: ask('x'), bytes: 400_000 })
    expect(await runPlugin(longContext, { role: 'long' } as Options).route(big)).toMatchObject({
      role: 'long',
    })
  })
})

describe('long-context (end to end)', () => {
  it("sends a long request to the role's model at the provider, and a short one as the client sent it", async () => {
    const fake = await startFakeUpstream()
    const home = tempHome()
    const config = configFor(fake, {
      plugins: [{ path: EXAMPLE, options: { threshold: 300, role: 'long' } }],
    })
    writeConfig(home, config)
    const ws = new Workspace(home, 'lc')
    await ws.ensure()
    await setRole(
      ws.repo,
      'default',
      'long',
      { provider: 'anthropic', model: 'claude-long-ctx' },
      config.providers,
    )
    const [serve, types] = await Promise.all([
      spawnServe(['--home', home, '--port', '0'], { HOLDFAST_TOKEN: '' }),
      cliAsync(['types', '--plugin-options', path.relative(ROOT, EXAMPLE), '--home', home]),
    ])
    try {
      const base = `${serve.url}/w/lc/a/main`
      expect((await post(base, ask('short'))).status).toBe(200)
      expect((await post(base, ask(words(300)))).status).toBe(200)
      const models = fake.received.map((r) => JSON.parse(r.body.toString()).model as string)
      expect(models).toEqual(['claude-sonnet-4-5', 'claude-long-ctx'])
      const repo = path.join(home, 'workspaces', 'lc', 'repo.git')
      const committed = () => git(repo, 'log', '--format=%s', 'agents/main').startsWith('step 002')
      await eventually(committed, 5000, 'step 002 committed')
      expect(meta(repo, 'main', '002').route).toMatchObject({ role: 'long', plugin: 'long-context' })
      expect(meta(repo, 'main', '001').route).toMatchObject({ role: null, plugin: null })
    } finally {
      await serve.kill()
      await fake.close()
      fs.rmSync(home, { recursive: true, force: true })
    }
    expect(types.stderr).toBe('')
    expect(types.stdout).toContain('export interface LongContextOptions {')
    expect(types.stdout).toMatch(/ {2}threshold\?: number\n/)
    expect(types.stdout).toMatch(/ {2}role: string\n/)
  }, 30_000)

  it('refuses types without <ws> <agent> or --plugin-options', () => {
    const r = cli(['types', '--home', ROOT])
    expect([r.code, r.stderr]).toEqual([
      1,
      'holdfast: holdfast types needs <ws> <agent>, or --plugin-options <plugin>\n',
    ])
  })
})
