/**
 * Hot reload of a plugin file: its directory is watched (editors save by rename), events are
 * debounced, and a changed file is imported under a fresh module URL, validated and set up with
 * the same options; then it takes the old instance's place in the chain and the old one is
 * closed. Invariant: a reload that fails keeps the running instance and logs why. Only the file
 * itself is re-imported: modules it imports stay as first loaded.
 */
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import type { Logger } from '../proxy/process/log'
import type { RecordsView } from './api'
import { closePlugin, type PluginHost } from './runner'
import { instantiate, pinoLog, PluginLoadError } from './instance'
import { importDefinition } from './modules'
import path from 'node:path'

const RELOAD_DEBOUNCE_MS = 150

let version = 0

const digest = (file: string): string | undefined => {
  try {
    return createHash('sha256').update(fs.readFileSync(file)).digest('hex')
  } catch {
    return undefined // mid-rename: the next event reads the new file
  }
}

export function watchPlugin(
  host: PluginHost,
  w: { file: string; options: unknown; dataDir: string; log: Logger; records?: RecordsView },
): void {
  const base = path.basename(w.file)
  let seen = digest(w.file)
  let timer: NodeJS.Timeout | undefined
  let running: Promise<void> = Promise.resolve()
  let closed = false

  const reload = async (): Promise<void> => {
    const now = digest(w.file)
    if (closed || now === undefined || now === seen) return
    seen = now
    const old = host.plugins.find((p) => p.source === w.file)
    if (!old) return
    try {
      const definition = await importDefinition(w.file, w.file, ++version)
      if (definition.name !== old.name)
        throw new PluginLoadError(
          `plugin ${old.name}: the changed file names itself "${definition.name}"; restart holdfast to rename a plugin`,
        )
      const next = await instantiate(definition, w.options, {
        dataDir: w.dataDir,
        log: pinoLog(w.log, definition.name),
        source: w.file,
        records: w.records,
      })
      if (closed) return void (await closePlugin(next, w.log))
      host.replace(next)
      await closePlugin(old, w.log)
      w.log.info({ plugin: old.name, file: w.file }, 'plugin reloaded')
    } catch (err) {
      w.log.error(
        { plugin: old.name, file: w.file, err: (err as Error).message },
        'plugin reload failed; the running instance stays',
      )
    }
  }

  let watcher: fs.FSWatcher
  try {
    watcher = fs.watch(path.dirname(w.file), { persistent: false }, (_event, name) => {
      if (name !== null && name !== base) return
      clearTimeout(timer)
      timer = setTimeout(() => {
        running = running.then(reload)
      }, RELOAD_DEBOUNCE_MS)
    })
  } catch (err) {
    w.log.warn(
      { file: w.file, err: (err as Error).message },
      'cannot watch a plugin file; changes need a restart',
    )
    return
  }
  watcher.on('error', (err) => w.log.warn({ file: w.file, err: err.message }, 'plugin file watch failed'))
  host.onClose(() => {
    closed = true
    clearTimeout(timer)
    watcher.close()
  })
}
