/**
 * The remote's names and rules, pure: which remote (only the one named `holdfast`), this
 * machine's name, where an agent's branch goes on the remote and where a teammate's lands here,
 * the refspecs, git's `push --porcelain` lines as data, the retry delays. Invariant: every ref
 * built here is made of components that passed isRefComponent; nothing here runs git.
 */
import os from 'node:os'
import { isRefComponent } from '../core/naming'

/** The one remote holdfast pushes to and fetches from: the user names it, holdfast never picks one. */
export const REMOTE = 'holdfast'

/** Where an agent's branch goes on the remote: a namespace of its own, or under refs/heads/ for hosts that refuse others. */
export type RefForm = 'custom' | 'heads'

/** A teammate's agents, fetched here read-only: `refs/holdfast/<machine>/agents/<agent>`. */
export const TEAMMATES_PREFIX = 'refs/holdfast/'

/** Where the remote's config lineages are tracked here (what `git remote add` would use). */
export const TRACKING_CONFIG_PREFIX = `refs/remotes/${REMOTE}/config/`

/**
 * This machine's name in the remote: `machine:` from holdfast.yaml, else the host name's first
 * label made into one ref component (characters a ref cannot hold become `-`; `machine` if
 * nothing usable is left). A configured name that is not a ref component is refused.
 */
export function machineName(configured: string | undefined, hostname: string = os.hostname()): string {
  if (configured !== undefined) {
    if (!isRefComponent(configured) || configured.length > 64)
      throw new Error(
        `holdfast.yaml: machine: ${JSON.stringify(configured)} is not usable: one git ref component of at most 64 characters (no spaces, ~ ^ : ? * [, "..", leading "." or "-")`,
      )
    return configured
  }
  const label = hostname.split('.')[0] ?? ''
  const cleaned = label
    .replace(/[^A-Za-z0-9_-]+/g, '-')
    .replace(/^[-]+|[-]+$/g, '')
    .slice(0, 64)
  return cleaned === '' ? 'machine' : cleaned
}

/** The ref an agent's branch is pushed to on the remote. */
export function remoteAgentRef(machine: string, agent: string, form: RefForm): string {
  const base = `holdfast/${machine}/agents/${agent}`
  return form === 'custom' ? `refs/${base}` : `refs/heads/${base}`
}

/**
 * Where this machine's own agents, as the remote holds them, are tracked here (by form): a heal's
 * fetch writes `refs/remotes/holdfast/own/<form>/<agent>`, never `refs/heads/agents/*`.
 */
export const OWN_TRACKING_PREFIX = `refs/remotes/${REMOTE}/own/`

/** The tracking ref of this machine's `agent` as the remote holds it in `form`. */
export function ownTrackingRef(form: RefForm, agent: string): string {
  return `${OWN_TRACKING_PREFIX}${form}/${agent}`
}

/** Fetch refspecs bringing this machine's own agents, both forms, into their tracking refs. */
export function ownRefspecs(machine: string): string[] {
  return (['custom', 'heads'] as const).map(
    (form) => `+${remoteAgentRef(machine, '*', form)}:${ownTrackingRef(form, '*')}`,
  )
}

/**
 * Where an agent's steps go on the remote once its history there diverged from this branch's:
 * beside it, named after the last step both share (`…/diverged/<agent>/after-003`), so both stay.
 */
export function sideRef(machine: string, agent: string, base: string, form: RefForm): string {
  const ref = `holdfast/${machine}/diverged/${agent}/after-${base}`
  return form === 'custom' ? `refs/${ref}` : `refs/heads/${ref}`
}

/** The push refspec for one agent: the commit itself (never `+`: git refuses what does not fast-forward). */
export function pushRefspec(oid: string, machine: string, agent: string, form: RefForm): string {
  return `${oid}:${remoteAgentRef(machine, agent, form)}`
}

/** The agent a destination ref of ours names, if it is one. */
export function agentOfRemoteRef(ref: string, machine: string): string | undefined {
  for (const form of ['custom', 'heads'] as const) {
    const prefix = remoteAgentRef(machine, '', form)
    if (ref.startsWith(prefix) && isRefComponent(ref.slice(prefix.length))) return ref.slice(prefix.length)
  }
  return undefined
}

/** The agent a side ref of ours (sideRef) names, if it is one. */
export function agentOfSideRef(ref: string, machine: string): string | undefined {
  for (const form of ['custom', 'heads'] as const) {
    const prefix = sideRef(machine, '', '', form).slice(0, -'/after-'.length)
    const m = /^([^/]+)\/after-\d{3,}$/.exec(ref.startsWith(prefix) ? ref.slice(prefix.length) : '')
    if (m && isRefComponent(m[1] as string)) return m[1] as string
  }
  return undefined
}

/**
 * Fetch refspecs bringing teammates' agents in read-only under refs/holdfast/: one machine's,
 * or every machine's but this one (negative refspecs: git 2.29). Both forms land in one place.
 */
export function teammateRefspecs(me: string, machine?: string): string[] {
  if (machine !== undefined)
    return [
      `+refs/holdfast/${machine}/agents/*:refs/holdfast/${machine}/agents/*`,
      `+refs/heads/holdfast/${machine}/agents/*:refs/holdfast/${machine}/agents/*`,
    ]
  return [
    '+refs/holdfast/*:refs/holdfast/*',
    '+refs/heads/holdfast/*:refs/holdfast/*',
    `^refs/holdfast/${me}/*`,
    `^refs/heads/holdfast/${me}/*`,
  ]
}

/** A fetched teammate's agent, from its local ref (`refs/holdfast/<machine>/agents/<agent>`). */
export function parseTeammateRef(ref: string): { machine: string; agent: string } | undefined {
  const m = /^refs\/holdfast\/([^/]+)\/agents\/([^/]+)$/.exec(ref)
  if (!m || !isRefComponent(m[1] as string) || !isRefComponent(m[2] as string)) return undefined
  return { machine: m[1] as string, agent: m[2] as string }
}

/** One ref's line of `git push --porcelain`. */
export interface PushLine {
  dst: string
  /** pushed (new or fast-forwarded), up to date, refused as not a fast-forward, refused by the remote. */
  outcome: 'pushed' | 'up-to-date' | 'not-fast-forward' | 'remote-rejected' | 'rejected'
  summary: string
}

/**
 * `git push --porcelain` stdout as data: `<flag>\t<src>:<dst>\t<summary>` lines (flags: space
 * fast-forward, `*` new, `=` up to date, `!` rejected; https://git-scm.com/docs/git-push#_output).
 * A push that never reached the remote prints none.
 */
export function parsePushPorcelain(stdout: string): PushLine[] {
  const out: PushLine[] = []
  for (const line of stdout.split('\n')) {
    const m = /^([ *=!+-])\t([^\t]*):([^\t]+)\t(.*)$/.exec(line)
    if (!m) continue
    const flag = m[1] as string
    const summary = m[4] as string
    let outcome: PushLine['outcome']
    if (flag === '=') outcome = 'up-to-date'
    else if (flag === ' ' || flag === '*') outcome = 'pushed'
    else if (/\[remote rejected\]|\[remote failure\]/.test(summary)) outcome = 'remote-rejected'
    else if (/non-fast-forward|fetch first|\[rejected\]/.test(summary)) outcome = 'not-fast-forward'
    else outcome = 'rejected'
    out.push({ dst: m[3] as string, outcome, summary })
  }
  return out
}

/** The delay before retry number `attempt` (1, 2, …): doubling from `min`, at most `max`. */
export function retryDelay(attempt: number, min: number, max: number): number {
  return Math.min(max, min * 2 ** Math.max(0, attempt - 1))
}

/**
 * A remote URL fit to show: any password in it replaced (`https://user:***@host/…`). The CLI
 * refuses to set such a URL; one set by hand is still never printed, logged or saved as it is.
 */
export function shownUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^/@:]*):[^/@]*@/i, '$1:***@')
}

/** Whether a URL carries a password (credentials belong to git's credential helpers, not the URL). */
export function urlHasPassword(url: string): boolean {
  return shownUrl(url) !== url
}

/** The first line of git's stderr that says something (hints and progress dropped). */
export function gitReason(stderr: string): string {
  const lines = stderr
    .split(/\r?\n|\r/)
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('hint:'))
  const chosen = lines.find((l) => /^(fatal|error|holdfast):/.test(l)) ?? lines[0] ?? 'git failed'
  return chosen.replace(/^(fatal|error): /, '')
}
