/**
 * holdfast's own dispatcher (DESIGN §9): `dispatch <role> <ws> <parent> --goal … --from … --pin …`.
 * Invariant: every check runs before any ref is created, so a refusal leaves nothing behind;
 * then `agents/<child>` is created at the fork point with `goal.md` and the pins, and the child's
 * first step is sent through the running proxy, which records and commits it like any step.
 */
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import { childId, checkPins, type DispatchArgs } from '../core/attempt'
import { firstRequest } from '../core/continuation'
import { isObject, type JsonObject } from '../core/json'
import { checkName } from '../core/naming'
import { type Dialect, dialectByName } from '../dialects'
import type { HoldfastConfig } from '../store/config'
import { ConfigReader } from '../store/config/lineage'
import { casRef, commitFiles, type Notch, readRef, resolveNotch } from '../store/git'
import { agentRef } from '../core/layout'
import { readNotchStep } from '../record/read'
import { Workspace } from '../store/workspace'

export class DispatchRefused extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'DispatchRefused'
  }
}

export interface Prepared {
  args: DispatchArgs
  ws: Workspace
  child: string
  notch: Notch
  dialect: Dialect
  roleModel: string
  body: Buffer
  headers: Record<string, string>
  pins: { dest: string; bytes: Buffer }[]
}

const refuse = (message: string): never => {
  throw new DispatchRefused(message)
}

/** Every check of DESIGN §9, in order, then the child's first request. Creates nothing. */
export async function prepareDispatch(
  home: string,
  config: HoldfastConfig,
  args: DispatchArgs,
  now = new Date(),
): Promise<Prepared> {
  for (const [kind, v] of [
    ['workspace', args.ws],
    ['agent', args.parent],
    ['role', args.role],
  ] as const) {
    const problem = checkName(kind, v)
    if (problem) refuse(problem)
  }
  const ws = new Workspace(home, args.ws)
  if (!ws.exists()) refuse(`no workspace "${args.ws}" in ${home}`)
  if (!(await readRef(ws.repo, agentRef(args.parent))))
    refuse(`parent agent "${args.parent}" does not exist in workspace "${args.ws}"`)
  const notch = await resolveNotch(ws.repo, args.from).catch((err: Error) => refuse(err.message))
  // The role must be declared where the child's first step resolves: the followed config of the fork point.
  const resolved = await new ConfigReader(ws.repo).resolve(notch.commit, () => Promise.resolve(notch.commit))
  if (!resolved.ok) refuse(`roles at ${args.from}: ${resolved.message}`)
  if (resolved.ok && !resolved.roles.ok) refuse(resolved.roles.error)
  const roles = resolved.ok && resolved.roles.ok ? resolved.roles.value.roles : {}
  const role = roles[args.role]
  if (!role || !Object.hasOwn(roles, args.role)) {
    const declared = Object.keys(roles).sort()
    return refuse(
      `role "${args.role}" is not declared at the followed config of ${args.from} (${resolved.ok ? resolved.followed.commit.slice(0, 8) : '?'}); declared roles: ${declared.length ? declared.join(', ') : 'none'}`,
    )
  }
  const row = config.providers[role.provider]
  if (!row)
    return refuse(
      `role "${args.role}" routes to provider row "${role.provider}", which holdfast.yaml does not declare`,
    )
  if (!row.api_key_env) {
    refuse(
      `role "${args.role}" routes to provider row "${role.provider}", which names no api_key_env: an attempt has no client whose key could pass through`,
    )
  }
  if (args.goal.trim() === '') refuse('the goal is empty: say what this attempt is for (--goal)')
  const pinProblem = checkPins(args.pins)
  if (pinProblem) refuse(pinProblem)
  const pins = args.pins.map((p) => {
    try {
      const st = fs.statSync(p.src)
      if (!st.isFile()) throw new Error('not a file')
      return { dest: p.dest, bytes: fs.readFileSync(p.src) }
    } catch (err) {
      return refuse(`pin source "${p.src}" is not readable: ${(err as Error).message}`)
    }
  })
  const skills = pins
    .filter((p) => /^skills\/[^/]+\/[^/]+\.md$/.test(p.dest))
    .map((p) => ({ dest: p.dest, text: p.bytes.toString('utf8') }))

  // A clean start speaks the row family's own dialect; a fork speaks its notch's.
  let dialect = dialectByName(row.dialect)
  let body: JsonObject
  const headers: Record<string, string> = { 'x-holdfast-role': args.role }
  if (notch.kind === 'clean') {
    body = firstRequest(dialect, {
      goal: args.goal,
      skills,
      roleModel: role.model,
      ...(role.max_output_tokens ? { roleMaxTokens: role.max_output_tokens } : {}),
    })
  } else {
    if (!notch.step)
      return refuse(
        `--from ${args.from} is not a recorded step commit; fork from <agent>@<NNN>, agents/<agent> or config/<name>`,
      )
    const step = await readNotchStep(ws.repo, notch.commit, notch.step.agent, notch.step.n)
    const okStep =
      step.meta.outcome === 'ok' && typeof step.meta.status === 'number' && step.meta.status < 400
    if (!okStep)
      refuse(
        `the notch's own step did not succeed (${step.meta.outcome ?? 'unknown'}${step.meta.status ? `, status ${step.meta.status}` : ''}): fork from a step that was answered`,
      )
    dialect = dialectByName(step.meta.dialect)
    if (dialect.rows.name !== row.dialect) {
      refuse(
        `role "${args.role}" routes to provider row "${role.provider}", which speaks ${row.dialect}; the notch's conversation speaks ${dialect.name} (sent to ${dialect.rows.name} rows)`,
      )
    }
    const request = JSON.parse(step.request.toString('utf8')) as unknown
    if (!isObject(request)) return refuse(`the notch's request.json is not a JSON object`)
    const reply = step.response
      ? dialect.rebuildReply(step.response.bytes, step.response.file === 'response.sse')
      : undefined
    body = firstRequest(dialect, {
      notch: { request, reply },
      answerId: step.meta.answer_id,
      goal: args.goal,
      skills,
      roleModel: role.model,
      ...(role.max_output_tokens ? { roleMaxTokens: role.max_output_tokens } : {}),
    })
    const version = step.meta.request_headers['anthropic-version']
    if (version) headers['anthropic-version'] = version
    const beta = step.meta.cache_keying_headers['anthropic-beta']
    if (beta) headers['anthropic-beta'] = beta
  }
  for (const [k, v] of Object.entries(dialect.requiredHeaders)) headers[k] ??= v
  headers['content-type'] = 'application/json'
  const child = childId(args.parent, now, randomBytes(3).toString('hex').slice(0, 4))
  return {
    args,
    ws,
    child,
    notch,
    dialect,
    roleModel: role.model,
    body: Buffer.from(JSON.stringify(body)),
    headers,
    pins,
  }
}

/** Create `agents/<child>` at the fork point with `dispatch: <role> [<child>]` holding goal.md and the pins. */
export async function createChild(p: Prepared): Promise<string> {
  const files: Record<string, Buffer | string> = { 'goal.md': p.args.goal }
  for (const pin of p.pins) files[pin.dest] = pin.bytes
  const oid = await commitFiles(p.ws.repo, {
    parent: p.notch.commit,
    files,
    message: `dispatch: ${p.args.role} [${p.child}]`,
  })
  await casRef(p.ws.repo, agentRef(p.child), oid, null)
  return oid
}
