/**
 * Firing attempts: one dispatch per role from one notch (a cohort is just N of them), each an
 * ops-log row. Same-model attempts are staggered: the first is sent alone until its first byte
 * arrives, then the others, so they read its cache write instead of each paying one.
 * Invariant: a refused attempt never blocks the others, and leaves nothing behind.
 */
import { spawnChild } from '../process/spawn'
import { dispatchArgv, type DispatchArgs, skillPin } from '../core/attempt'
import type { HoldfastConfig } from '../store/config'
import { resolveNotch } from '../store/git'
import { appendOps, type Origin } from '../store/ops-log'
import { readServeInfo } from '../store/serve-lock'
import { homeToken } from '../store/token'
import { Workspace } from '../store/workspace'
import { createChild, DispatchRefused, prepareDispatch, type Prepared } from './dispatch'
import { type Progress, submitFirstStep } from './submit'

export interface CohortRequest {
  ws: string
  from: string
  goal: string
  roles: string[]
  skills: string[]
  parent?: string
}

export type AttemptEvent =
  | { role: string; state: 'refused'; message: string }
  | ({ role: string; child: string } & Progress)
  | { role: string; state: 'external'; exit: number; stdout: string; stderr: string }

export interface AttemptResult {
  role: string
  argv: string[]
  child?: string
  exit: number
  message?: string
  /** What the dispatch printed (its ops-log row). */
  stdout: string
  stderr: string
}

/** What to tell a person when another program dispatches instead of holdfast (it gets no stagger, no progress). */
export function externalNotice(config: HoldfastConfig): string | undefined {
  return config.dispatcher
    ? `holdfast: dispatching through ${config.dispatcher.command.join(' ')} (no stagger, no progress)\n`
    : undefined
}

/** Run an external dispatcher (holdfast.yaml `dispatcher.command`) with the argv; collect its output. */
function runExternal(
  command: readonly string[],
  argv: string[],
): Promise<{ exit: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawnChild(command[0] as string, [...command.slice(1), ...argv], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()))
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()))
    child.on('error', (err) => resolve({ exit: 127, stdout, stderr: stderr + err.message }))
    child.on('close', (code) => resolve({ exit: code ?? 1, stdout, stderr }))
  })
}

/** Resolve the cohort's `--from` once (refs move: every attempt carries the same commit id). */
export async function cohortArgs(home: string, req: CohortRequest): Promise<DispatchArgs[]> {
  const ws = new Workspace(home, req.ws)
  const notch = await resolveNotch(ws.repo, req.from)
  const parent = req.parent ?? (notch.kind === 'fork' ? notch.step?.agent : undefined)
  if (!parent) {
    throw new DispatchRefused(`--parent is required: ${req.from} is not a step of an agent branch`)
  }
  const from = notch.kind === 'clean' ? notch.ref : notch.commit
  const pins = req.skills.map((s) => skillPin(s, home))
  return req.roles.map((role) => ({ role, ws: req.ws, parent, goal: req.goal, from, pins }))
}

/**
 * Fire dispatches (each an ops-log row, with what a user would have seen on stdout and stderr):
 * an external dispatcher when configured, else holdfast's own, staggering same-model attempts.
 */
export async function fireDispatches(
  home: string,
  config: HoldfastConfig,
  all: readonly DispatchArgs[],
  origin: Origin,
  onEvent: (e: AttemptEvent) => void = () => undefined,
): Promise<AttemptResult[]> {
  const done = (
    args: DispatchArgs,
    exit: number,
    stdout: string,
    stderr: string,
    extra: Partial<AttemptResult> = {},
  ) => {
    const argv = dispatchArgv(args)
    appendOps(home, { ts: new Date().toISOString(), argv, cwd: process.cwd(), exit, origin, stdout, stderr })
    return { role: args.role, argv, exit, stdout, stderr, ...extra }
  }
  if (config.dispatcher) {
    const command = config.dispatcher.command
    return Promise.all(
      all.map(async (args) => {
        const r = await runExternal(command, dispatchArgv(args))
        onEvent({ role: args.role, state: 'external', ...r })
        return done(
          args,
          r.exit,
          r.stdout,
          r.stderr,
          r.exit ? { message: r.stderr.trim() } : { child: r.stdout.trim() },
        )
      }),
    )
  }
  const server = readServeInfo(home)
  const results: AttemptResult[] = []
  const ready: Prepared[] = []
  for (const args of all) {
    try {
      if (!server)
        throw new DispatchRefused(`holdfast serve is not running on ${home}; start holdfast serve first`)
      ready.push(await prepareDispatch(home, config, args))
    } catch (err) {
      if (!(err instanceof DispatchRefused)) throw err
      onEvent({ role: args.role, state: 'refused', message: err.message })
      results.push(done(args, 1, '', `holdfast: ${err.message}\n`, { message: err.message }))
    }
  }
  const token = homeToken(home, config)
  const fire = async (p: Prepared): Promise<{ firstByte: Promise<void>; done: Promise<AttemptResult> }> => {
    await createChild(p)
    const s = submitFirstStep(p, (server as { url: string }).url, token, (child, progress) =>
      onEvent({ role: p.args.role, child, ...progress }),
    )
    const finished = s.done.then((final) => {
      if (final.state === 'done') return done(p.args, 0, `${p.child}\n`, '', { child: p.child })
      const message = final.state === 'failed' ? final.message : 'unknown'
      return done(p.args, 1, `${p.child}\n`, `holdfast: the first step failed: ${message}\n`, {
        child: p.child,
        message,
      })
    })
    return { firstByte: s.firstByte, done: finished }
  }
  const byModel = new Map<string, Prepared[]>()
  for (const p of ready) byModel.set(p.roleModel, [...(byModel.get(p.roleModel) ?? []), p])
  const groups = [...byModel.values()].map(async ([lead, ...rest]) => {
    if (!lead) return []
    const first = await fire(lead)
    if (rest.length > 0) await first.firstByte // the others read the lead's cache write
    const others = await Promise.all(rest.map(fire))
    return Promise.all([first.done, ...others.map((o) => o.done)])
  })
  for (const g of await Promise.all(groups)) results.push(...g)
  return results
}

/** A cohort: one dispatch per role from one notch. */
export async function fireCohort(
  home: string,
  config: HoldfastConfig,
  req: CohortRequest,
  origin: Origin,
  onEvent?: (e: AttemptEvent) => void,
): Promise<AttemptResult[]> {
  return fireDispatches(home, config, await cohortArgs(home, req), origin, onEvent)
}

/** One dispatch from its argv (`holdfast dispatch …`, `POST /_holdfast/dispatch`), once its first step is answered. */
export async function dispatchOne(
  home: string,
  config: HoldfastConfig,
  args: DispatchArgs,
  origin: Origin,
  onEvent?: (e: AttemptEvent) => void,
): Promise<AttemptResult> {
  return (await fireDispatches(home, config, [args], origin, onEvent))[0] as AttemptResult
}
