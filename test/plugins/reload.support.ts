/**
 * The driver of test/plugins/reload.test.ts, run in a child process (a reload is a real `import()`,
 * which jest's module system cannot run): a plugin host with two plugin files, one watched, and a
 * list of acts on the watched file; after each act, what the host holds, which instances were
 * closed, and what was logged. Invariant: prints one JSON array on stdout, and nothing else.
 */
import fs from 'node:fs'
import path from 'node:path'
import { Writable } from 'node:stream'
import pino from 'pino'
import { instantiate, pinoLog } from '../../plugins/instance'
import { importDefinition } from '../../plugins/modules'
import { watchPlugin } from '../../plugins/reload'
import { PluginHost } from '../../plugins/runner'

/** A save (write a temp file, rename it over: as editors do), a rewrite of the same bytes, or the host's close. */
export type Act = { save: string } | { touch: true } | { closeHost: true }

export interface Seen {
  /** Per plugin in the chain: its name, its `tag` (a field of the definition) and its options. */
  chain: { name: string; tag: unknown; options: unknown }[]
  /** The tags of instances whose close() ran, in order. */
  closed: string[]
  /** Log lines since the previous act: msg and err. */
  logs: { msg: string; err?: string }[]
}

/** Wait until `done()`, or `ms` passed. */
async function until(done: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms
  while (!done() && Date.now() < end) await new Promise((r) => setTimeout(r, 20))
}

export async function drive(dir: string, first: string, acts: Act[]): Promise<Seen[]> {
  const closed: string[] = []
  ;(globalThis as { closedTags?: string[] }).closedTags = closed
  const lines: { msg: string; err?: string }[] = []
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      const { msg, err } = JSON.parse(chunk.toString()) as { msg: string; err?: string }
      lines.push(err === undefined ? { msg } : { msg, err })
      done()
    },
  })
  const log = pino({ level: 'info' }, sink)
  const file = path.join(dir, 'watched.cjs')
  const other = path.join(dir, 'other.cjs')
  fs.writeFileSync(file, first)
  fs.writeFileSync(other, `module.exports = { name: 'other', tag: 'other', apiVersion: 1, setup() {} }\n`)
  const options = { suffix: '-opt' }
  const load = async (f: string, opts: unknown) =>
    instantiate(await importDefinition(f, f), opts, {
      dataDir: path.join(dir, 'data'),
      log: pinoLog(log, 'x'),
      source: f,
    })
  const host = new PluginHost([await load(file, options), await load(other, {})], log)
  watchPlugin(host, { file, options, dataDir: path.join(dir, 'data'), log })

  const out: Seen[] = []
  let from = 0
  let hostClosed = false
  for (const act of acts) {
    if ('save' in act) {
      fs.writeFileSync(`${file}.tmp`, act.save)
      fs.renameSync(`${file}.tmp`, file)
    } else if ('touch' in act) {
      fs.writeFileSync(file, fs.readFileSync(file))
    } else {
      await host.close()
      hostClosed = true
    }
    const reloadLogged = () => lines.slice(from).some((l) => /^plugin reload/.test(l.msg))
    // A reload (or its failure) is logged; when none is expected, wait past the debounce.
    await until(reloadLogged, 'save' in act && !hostClosed ? 3000 : 500)
    await new Promise((r) => setTimeout(r, 30)) // the old instance's close, after the log line
    out.push({
      chain: host.plugins.map((p) => ({
        name: p.name,
        tag: (p.definition as { tag?: unknown }).tag,
        options: p.options,
      })),
      closed: [...closed],
      logs: lines.slice(from),
    })
    from = lines.length
  }
  return out
}
