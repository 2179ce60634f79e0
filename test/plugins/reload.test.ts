/**
 * plugins/reload.ts, hot reload of a plugin file: a changed file (saved by rename, as editors do)
 * is imported afresh, set up with the same options, put in the old instance's place in the chain,
 * and the old instance is closed; a save of the same bytes reloads nothing; a change that fails
 * (a renamed plugin, a throwing setup) keeps the running instance and logs why; after the host
 * closes, nothing reloads; a file whose directory cannot be watched is a warning, not a failure.
 * The reloads run in a child process (reload.support.ts): a real import() needs one.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Writable } from 'node:stream'
import pino from 'pino'
import { watchPlugin } from '../../plugins/reload'
import { PluginHost } from '../../plugins/runner'
import { inChild, src } from './child.support'
import type { Act, Seen } from './reload.support'

const plugin = (tag: string, extra = '') => `module.exports = {
  name: 'watched', tag: '${tag}', apiVersion: 1,
  setup({ options }) { ${extra} return { close() { globalThis.closedTags.push('${tag}' + options.suffix) } } },
}\n`

const dirs: string[] = []
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true })
})

/** One host in its own directory and child process, driven through `acts`. */
function drive(first: string, acts: Act[]): Promise<Seen[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'holdfast-reload-'))
  dirs.push(dir)
  return inChild(`${src('test/plugins/reload.support.ts')}
    .drive(${JSON.stringify(dir)}, ${JSON.stringify(first)}, ${JSON.stringify(acts)})
    .then((seen) => process.stdout.write(JSON.stringify(seen)))`)
}

const renamed = plugin('two').replace("name: 'watched'", "name: 'renamed'")
const throwing = plugin('three', "throw new Error('no database');")

// The scenarios run side by side, each in its own child (each waits on a debounce and a watch).
let runs: Record<'changed' | 'touched' | 'failed' | 'closed', Seen[]>
beforeAll(async () => {
  const [changed, touched, failed, closed] = await Promise.all([
    drive(plugin('one'), [{ save: plugin('two') }, { save: plugin('three') }]),
    drive(plugin('one'), [{ touch: true }]),
    drive(plugin('one'), [{ save: renamed }, { save: throwing }, { save: plugin('four') }]),
    drive(plugin('one'), [{ closeHost: true }, { save: plugin('two') }]),
  ])
  runs = { changed: changed!, touched: touched!, failed: failed!, closed: closed! }
})

const tags = (s: Seen | undefined) => s?.chain.map((p) => p.tag)
const msgs = (s: Seen | undefined) => s?.logs.map((l) => l.msg)

describe('a changed plugin file', () => {
  it('takes the old instance’s place with the same options, closes the old one, and leaves the rest of the chain', () => {
    const [changed, again] = runs.changed
    expect(tags(changed)).toEqual(['two', 'other'])
    expect(changed?.chain[0]?.options).toEqual({ suffix: '-opt' })
    expect(changed?.closed).toEqual(['one-opt'])
    expect(msgs(changed)).toEqual(['plugin reloaded'])
    expect(tags(again)).toEqual(['three', 'other'])
    expect(again?.closed).toEqual(['one-opt', 'two-opt'])
  })

  it('is not reloaded when saved with the same bytes', () => {
    const [touched] = runs.touched
    expect([tags(touched), touched?.closed, touched?.logs]).toEqual([['one', 'other'], [], []])
  })
})

describe('a change that fails', () => {
  it('keeps the running instance when the file renames the plugin or its setup throws, and logs why', () => {
    const [r, t, fixed] = runs.failed
    expect([tags(r), r?.closed]).toEqual([['one', 'other'], []])
    expect(r?.logs).toEqual([
      {
        msg: 'plugin reload failed; the running instance stays',
        err: 'plugin watched: the changed file names itself "renamed"; restart holdfast to rename a plugin',
      },
    ])
    expect([tags(t), t?.closed]).toEqual([['one', 'other'], []])
    expect(t?.logs[0]?.err).toBe('plugin watched: setup threw: no database')
    // A later good change still reloads: the failure did not stop the watch.
    expect([tags(fixed), fixed?.closed]).toEqual([['four', 'other'], ['one-opt']])
  })
})

describe('after the host closes', () => {
  it('reloads nothing: the watch stopped with it', () => {
    const [closed, changed] = runs.closed
    expect(closed?.closed).toEqual(['one-opt']) // the host closed its instances
    expect([tags(changed), changed?.closed, changed?.logs]).toEqual([['one', 'other'], ['one-opt'], []])
  })
})

describe('a file whose directory cannot be watched', () => {
  it('logs a warning that changes need a restart, and the host runs on', async () => {
    const lines: { level: number; msg: string; file: string }[] = []
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(JSON.parse(chunk.toString()) as (typeof lines)[number])
        done()
      },
    })
    const host = new PluginHost([], pino(sink))
    const file = path.join(os.tmpdir(), 'holdfast-reload-no-such-dir', 'p.cjs')
    expect(() =>
      watchPlugin(host, { file, options: {}, dataDir: os.tmpdir(), log: pino(sink) }),
    ).not.toThrow()
    expect(lines.map(({ level, msg, file: f }) => ({ level, msg, f }))).toEqual([
      { level: 40, msg: 'cannot watch a plugin file; changes need a restart', f: file },
    ])
    await host.close()
  })
})
