/**
 * Firing attempts: one dispatch per role from one notch (a cohort is just N of them), each an
 * ops-log row. Same-model attempts are staggered: the first is sent alone until its first byte
 * arrives, then the others, so they read its cache write instead of each paying one.
 * Invariant: a refused attempt never blocks the others, and leaves nothing behind.
 */
import { spawn } from 'node:child_process'
import { dispatchArgv, type DispatchArgs, skillPin } from '../core/attempt'
import { configuredToken, type HoldfastConfig } from '../store/config'
import { resolveNotch } from '../store/notch'
import { appendOps, type Origin } from '../store/ops-log'
import { readServeInfo } from '../store/serve-lock'
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
}

/** Run an external dispatcher (holdfast.yaml `dispatcher.command`) with the argv; collect its output. */
function runExternal(
  command: readonly string[],
  argv: string[],
): Promise<{ exit: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(command[0] as string, [...command.slice(1), ...argv], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
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

export async function fireCohort(
  home: string,
  config: HoldfastConfig,
  req: CohortRequest,
  origin: Origin,
  onEvent: (e: AttemptEvent) => void = () => undefined,
): Promise<AttemptResult[]> {
  const all = await cohortArgs(home, req)
  const row = (argv: string[], exit: number, stdout: string, stderr: string): void =>
    appendOps(home, { ts: new Date().toISOString(), argv, cwd: process.cwd(), exit, origin, stdout, stderr })

  if (config.dispatcher) {
    const command = config.dispatcher.command
    return Promise.all(
      all.map(async (args) => {
        const argv = dispatchArgv(args)
        const r = await runExternal(command, argv)
        row(argv, r.exit, r.stdout, r.stderr)
        onEvent({ role: args.role, state: 'external', ...r })
        return {
          role: args.role,
          argv,
          exit: r.exit,
          ...(r.exit ? { message: r.stderr.trim() } : { child: r.stdout.trim() }),
        }
      }),
    )
  }

  const server = readServeInfo(home)
  const prepared: { args: DispatchArgs; argv: string[]; p?: Prepared; error?: string }[] = []
  for (const args of all) {
    const argv = dispatchArgv(args)
    if (!server) {
      prepared.push({
        args,
        argv,
        error: `holdfast serve is not running on ${home}; start holdfast serve first`,
      })
      continue
    }
    try {
      prepared.push({ args, argv, p: await prepareDispatch(home, config, args) })
    } catch (err) {
      if (!(err instanceof DispatchRefused)) throw err
      prepared.push({ args, argv, error: err.message })
    }
  }
  const results: AttemptResult[] = []
  for (const x of prepared) {
    if (x.error !== undefined) {
      onEvent({ role: x.args.role, state: 'refused', message: x.error })
      row(x.argv, 1, '', `holdfast: ${x.error}\n`)
      results.push({ role: x.args.role, argv: x.argv, exit: 1, message: x.error })
    }
  }
  const ready = prepared.filter(
    (x): x is { args: DispatchArgs; argv: string[]; p: Prepared } => x.p !== undefined,
  )
  const byModel = new Map<string, typeof ready>()
  for (const x of ready) byModel.set(x.p.roleModel, [...(byModel.get(x.p.roleModel) ?? []), x])
  const token = configuredToken(config)
  const fire = async (
    x: (typeof ready)[number],
  ): Promise<{ firstByte: Promise<void>; done: Promise<AttemptResult> }> => {
    await createChild(x.p)
    const s = submitFirstStep(x.p, (server as { url: string }).url, token, (child, progress) =>
      onEvent({ role: x.args.role, child, ...progress }),
    )
    const done = s.done.then((final): AttemptResult => {
      const ok = final.state === 'done'
      const message = final.state === 'failed' ? final.message : undefined
      row(x.argv, ok ? 0 : 1, `${x.p.child}\n`, ok ? '' : `holdfast: the first step failed: ${message}\n`)
      return {
        role: x.args.role,
        argv: x.argv,
        child: x.p.child,
        exit: ok ? 0 : 1,
        ...(message ? { message } : {}),
      }
    })
    return { firstByte: s.firstByte, done }
  }
  const groups = [...byModel.values()].map(async (group) => {
    const [lead, ...rest] = group
    if (!lead) return []
    const first = await fire(lead)
    if (rest.length > 0) await first.firstByte // the others read the lead's cache write
    const others = await Promise.all(rest.map(fire))
    return Promise.all([first.done, ...others.map((o) => o.done)])
  })
  for (const g of await Promise.all(groups)) results.push(...g)
  return results
}

/**
 * One dispatch from its argv (`holdfast dispatch …`, `POST /_holdfast/dispatch`): run it, wait
 * for the child's first step, log the row. An external dispatcher, when configured, runs instead.
 */
export async function dispatchOne(
  home: string,
  config: HoldfastConfig,
  args: DispatchArgs,
  origin: Origin,
  onEvent: (e: AttemptEvent) => void = () => undefined,
): Promise<AttemptResult & { stdout: string; stderr: string }> {
  const argv = dispatchArgv(args)
  const log = (exit: number, stdout: string, stderr: string) => {
    appendOps(home, { ts: new Date().toISOString(), argv, cwd: process.cwd(), exit, origin, stdout, stderr })
    return { stdout, stderr }
  }
  if (config.dispatcher) {
    const r = await runExternal(config.dispatcher.command, argv)
    onEvent({ role: args.role, state: 'external', ...r })
    log(r.exit, r.stdout, r.stderr)
    return { role: args.role, argv, exit: r.exit, stdout: r.stdout, stderr: r.stderr }
  }
  const server = readServeInfo(home)
  let p: Prepared
  try {
    if (!server)
      throw new DispatchRefused(`holdfast serve is not running on ${home}; start holdfast serve first`)
    p = await prepareDispatch(home, config, args)
  } catch (err) {
    if (!(err instanceof DispatchRefused)) throw err
    onEvent({ role: args.role, state: 'refused', message: err.message })
    return {
      role: args.role,
      argv,
      exit: 1,
      message: err.message,
      ...log(1, '', `holdfast: ${err.message}\n`),
    }
  }
  await createChild(p)
  const s = submitFirstStep(p, server.url, configuredToken(config), (child, progress) =>
    onEvent({ role: args.role, child, ...progress }),
  )
  const final = await s.done
  if (final.state === 'done')
    return { role: args.role, argv, child: p.child, exit: 0, ...log(0, `${p.child}\n`, '') }
  const message = final.state === 'failed' ? final.message : 'unknown'
  return {
    role: args.role,
    argv,
    child: p.child,
    exit: 1,
    message,
    ...log(1, `${p.child}\n`, `holdfast: the first step failed: ${message}\n`),
  }
}
