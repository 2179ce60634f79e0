/**
 * `holdfast export <ws> [agent] -o file.html`: the web view's pages of a workspace (or one agent)
 * as one self-contained HTML file that opens offline — for sharing a session in a bug report. Read
 * from git and the journal; no server needed. Invariant: the file is written whole (a temporary
 * file renamed into place), or not at all.
 */
import fs from 'node:fs'
import path from 'node:path'
import type { Command } from 'commander'
import { resolveHome } from '../proxy/store/home'
import { exportHtml } from '../proxy/view/export'
import { asCliError } from './lookup'

export function registerExport(program: Command): void {
  program
    .command('export')
    .description('write the web view of a workspace (or one agent) as one HTML file that opens offline')
    .argument('<ws>', 'workspace')
    .argument('[agent]', 'only this agent (with its subagents, side requests and attempts)')
    .requiredOption('-o, --output <file>', 'the HTML file to write')
    .option('--home <dir>', 'holdfast home (default $HOLDFAST_HOME, then ~/.holdfast)')
    .action(async (ws: string, agent: string | undefined, o: { output: string; home?: string }) => {
      const home = resolveHome(o.home)
      const tty = process.stderr.isTTY
      let shown = 0
      const doc = await exportHtml(home, ws, agent, (done, total) => {
        if (tty && (done === total || Date.now() - shown > 200)) {
          shown = Date.now()
          process.stderr.write(`\rexporting step ${done} of ${total}`)
        }
      }).catch(asCliError)
      if (tty) process.stderr.write('\n')
      const out = path.resolve(o.output)
      const tmp = `${out}.${process.pid}.tmp`
      fs.writeFileSync(tmp, doc)
      fs.renameSync(tmp, out)
      process.stdout.write(`wrote ${out} (${Math.round(Buffer.byteLength(doc) / 1024)} KB)\n`)
    })
}
