/**
 * `holdfast remote set|pull|fetch|show <ws>`: the workspace repository's git remote named
 * `holdfast`. `set` names it (git's own `remote add`/`set-url`; a running serve starts pushing at
 * once), `pull` follows the remote's config lineages that fast-forward (validated by the hook),
 * `fetch` brings teammates' agents in read-only, `show` reports what was pushed and pulled.
 * Invariant: credentials stay git's (a URL with a password is refused); nothing is pushed by a
 * command here; every git command runs in the workspace's own repository.
 */
import { askServe } from '../proxy/admin/ask'
import type { Command } from 'commander'
import { formatStep } from '../proxy/core/naming'
import { loadConfig } from '../proxy/store/config'
import { resolveHome } from '../proxy/store/home'
import { pullConfig } from '../proxy/remote/config-pull'
import { failure, RemoteUrl, runGitIn } from '../proxy/remote/git'
import { pushOptions } from '../proxy/remote'
import { REMOTE, remoteAgentRef, shownUrl, urlHasPassword } from '../proxy/remote/refs'
import {
  divergedSentence,
  readPullReport,
  readPushState,
  writePullReport,
  type LineageResult,
} from '../proxy/remote/state'
import { fetchTeammates, teammates } from '../proxy/remote/teammates'
import type { Workspace } from '../proxy/store/workspace'
import { existingWorkspace } from './lookup'
import { CliError, printJson } from './output'

/** The longest `set` waits to see whether the remote answers (less when remote.timeout_s is less). */
const PROBE_MS = 30_000

const HOME_HELP = 'holdfast home (default $HOLDFAST_HOME, then ~/.holdfast)'
const out = (line: string): void => void process.stdout.write(`${line}\n`)

/** The workspace's remote URL, or a refusal saying how to set one. */
async function urlOf(ws: Workspace): Promise<string> {
  const url = await new RemoteUrl(ws.repo.gitdir).get()
  if (!url)
    throw new CliError(
      `workspace "${ws.name}" has no remote named ${REMOTE}; set one with \`holdfast remote set ${ws.name} <url>\``,
    )
  return url
}

function options(home: string) {
  try {
    return pushOptions(loadConfig(home))
  } catch (err) {
    throw new CliError((err as Error).message)
  }
}

/** Ask a running serve to look at the workspace's remote now; undefined when none runs or it did not answer. */
async function nudgeServe(home: string, ws: string): Promise<boolean | undefined> {
  try {
    const answered = await askServe(home, '/_holdfast/remote/sync', {
      body: { workspace: ws },
      timeoutMs: 60_000,
    })
    return answered === undefined ? undefined : true
  } catch {
    return false
  }
}

async function set(home: string, wsName: string, url: string): Promise<void> {
  const ws = await existingWorkspace(home, wsName)
  if (urlHasPassword(url))
    throw new CliError(
      `${shownUrl(url)} carries a password: holdfast never stores credentials; use git's credential helper or an SSH key, and a URL without the password`,
    )
  const opts = options(home)
  const current = await new RemoteUrl(ws.repo.gitdir).get()
  if (current !== url) {
    const args = current === undefined ? ['remote', 'add', REMOTE, url] : ['remote', 'set-url', REMOTE, url]
    const r = await runGitIn(ws.repo.gitdir, args)
    if (r.code !== 0) throw new CliError(`git ${args.slice(0, 2).join(' ')}: ${failure(r)}`)
  }
  out(`${ws.name}: remote ${REMOTE} ${current === url ? 'is already' : 'is now'} ${shownUrl(url)}`)
  out(`agents are pushed as ${remoteAgentRef(opts.machine, '<agent>', 'custom')} (machine ${opts.machine})`)
  // The probe waits remote.timeout_s, at most PROBE_MS; the line says the limit it waited.
  const probeMs = Math.min(opts.timeoutMs, PROBE_MS)
  const probe = await runGitIn(ws.repo.gitdir, ['ls-remote', '--heads', REMOTE, 'refs/heads/config/*'], {
    remote: true,
    timeoutMs: probeMs,
  })
  if (probe.code === 0) {
    const lineages = probe.stdout.split('\n').filter(Boolean).length
    out(`the remote answers: ${lineages} config lineage${lineages === 1 ? '' : 's'}`)
  } else {
    out(`the remote does not answer yet (${failure(probe, probeMs)}): pushes are retried until it does`)
  }
  const served = await nudgeServe(home, ws.name)
  out(
    served === undefined
      ? 'no serve runs: the next `holdfast serve` pushes the agents and pulls config'
      : served
        ? 'the running serve is pushing the agents and has pulled config (`holdfast remote show` for the state)'
        : 'the running serve did not answer; it pushes at its next step',
  )
}

function lineageLine(l: LineageResult): string {
  const from = l.local?.slice(0, 8) ?? '(none)'
  const to = l.remote.slice(0, 8)
  switch (l.outcome) {
    case 'up-to-date':
      return `config/${l.lineage}: up to date at ${to}`
    case 'created':
      return `config/${l.lineage}: created at ${to} (validated by the hook)`
    case 'moved':
      return `config/${l.lineage}: ${from} → ${to} (validated by the hook)`
    case 'ahead':
      return `config/${l.lineage}: ${from} is ahead of the remote's ${to}; \`git push ${REMOTE} config/${l.lineage}\` publishes it`
    default:
      return `config/${l.lineage}: ${l.outcome}, stays at ${from}, not ${to}: ${l.reason ?? ''}`
  }
}

async function pull(home: string, wsName: string, json: boolean): Promise<void> {
  const ws = await existingWorkspace(home, wsName)
  const url = await urlOf(ws)
  const report = await pullConfig(ws, url, { timeoutMs: options(home).timeoutMs })
  await writePullReport(home, ws.name, report)
  if (json) printJson(report)
  else if (!report.error) {
    if (report.lineages.length === 0) out(`the remote ${shownUrl(url)} has no config lineage`)
    for (const l of report.lineages) out(lineageLine(l))
  }
  if (report.error) throw new CliError(`pull from ${shownUrl(url)}: ${report.error}`)
  const bad = report.lineages.filter((l) => ['refused', 'diverged', 'failed'].includes(l.outcome))
  if (bad.length > 0) process.exitCode = 1
}

async function fetchOthers(home: string, wsName: string, machine: string | undefined, json: boolean) {
  const ws = await existingWorkspace(home, wsName)
  const url = await urlOf(ws)
  const opts = options(home)
  const r = await fetchTeammates(ws, opts.machine, machine, { timeoutMs: opts.timeoutMs }).catch(
    (err: Error) => {
      throw new CliError(err.message)
    },
  )
  if (json) return printJson({ changed: r.changed, machines: Object.fromEntries(r.machines) })
  if (r.machines.size === 0) {
    out(`${shownUrl(url)} holds no other machine's agents${machine ? ` (none of ${machine})` : ''}`)
    return
  }
  for (const [m, agents] of r.machines) {
    if (machine !== undefined && m !== machine) continue
    const changed = r.changed.filter((c) => c.machine === m)
    out(
      `${m}: ${agents.length} agent${agents.length === 1 ? '' : 's'} (${agents.join(', ')}); ${changed.length} new or updated`,
    )
  }
  out(
    `read them with \`holdfast agents ${ws.name}\` and \`holdfast steps ${ws.name} <agent> --machine <machine>\``,
  )
}

async function show(home: string, wsName: string, json: boolean): Promise<void> {
  const ws = await existingWorkspace(home, wsName)
  const url = await new RemoteUrl(ws.repo.gitdir).get()
  const opts = options(home)
  const push = readPushState(home, ws.name) ?? null
  const config = readPullReport(home, ws.name) ?? null
  const others = Object.fromEntries(await teammates(ws, opts.machine))
  if (json)
    return printJson({
      url: url ? shownUrl(url) : null,
      machine: opts.machine,
      push,
      config,
      teammates: others,
    })
  if (!url) out(`${ws.name}: no remote named ${REMOTE} (\`holdfast remote set ${ws.name} <url>\`)`)
  else out(`${ws.name}: remote ${REMOTE} ${shownUrl(url)}, machine ${opts.machine}`)
  if (push) {
    out(
      `pushed (last ok ${push.last_ok_at ?? 'never'}${push.last_error ? `; last error: ${push.last_error}` : ''}):`,
    )
    for (const [agent, p] of Object.entries(push.agents))
      out(`  ${agent}: up to step ${formatStep(p.step)} (${p.commit.slice(0, 8)})`)
    for (const [agent, p] of Object.entries(push.refused))
      out(`  ${agent}: refused at step ${formatStep(p.step)}: ${p.reason}`)
    for (const [agent, d] of Object.entries(push.diverged ?? {}))
      out(`  DIVERGED ${divergedSentence(agent, d)}`)
    for (const [agent, h] of Object.entries(push.healed ?? {}))
      out(
        `  ${agent}: fetched back steps ${formatStep(h.from_step + 1)}–${formatStep(h.to_step)} from the remote at ${h.at} (a power cut had taken them here)`,
      )
  }
  if (config) {
    out(`config pulled ${config.at}${config.error ? `: failed: ${config.error}` : ':'}`)
    for (const l of config.lineages) out(`  ${lineageLine(l)}`)
  }
  for (const [m, agents] of Object.entries(others)) out(`teammate ${m}: ${agents.join(', ')}`)
}

export function registerRemote(program: Command): void {
  const remote = program
    .command('remote')
    .description('share records and config through the git remote named holdfast: set, pull, fetch, show')
  remote
    .command('set')
    .description(
      `name the workspace's remote (git remote add ${REMOTE} <url>); a running serve pushes at once`,
    )
    .argument('<ws>', 'workspace')
    .argument('<url>', 'a git URL (ssh, https, file, git); credentials stay with git')
    .option('--home <dir>', HOME_HELP)
    .action((ws: string, url: string, o: { home?: string }) => set(resolveHome(o.home), ws, url))
  remote
    .command('pull')
    .description(
      "fetch the remote's config/* lineages and follow those that fast-forward (the hook validates them)",
    )
    .argument('<ws>', 'workspace')
    .option('--home <dir>', HOME_HELP)
    .option('--json', 'print JSON')
    .action((ws: string, o: { home?: string; json?: boolean }) =>
      pull(resolveHome(o.home), ws, o.json === true),
    )
  remote
    .command('fetch')
    .description("bring teammates' recorded agents in, read-only (refs/holdfast/<machine>/agents/*)")
    .argument('<ws>', 'workspace')
    .argument('[machine]', "one teammate machine (default: every machine's but this one)")
    .option('--home <dir>', HOME_HELP)
    .option('--json', 'print JSON')
    .action((ws: string, machine: string | undefined, o: { home?: string; json?: boolean }) =>
      fetchOthers(resolveHome(o.home), ws, machine, o.json === true),
    )
  remote
    .command('show')
    .description('the remote, what was pushed (up to which step), the last config pull, fetched teammates')
    .argument('<ws>', 'workspace')
    .option('--home <dir>', HOME_HELP)
    .option('--json', 'print JSON')
    .action((ws: string, o: { home?: string; json?: boolean }) =>
      show(resolveHome(o.home), ws, o.json === true),
    )
}
