/**
 * One client frame of a Responses WebSocket as a step (DESIGN §13, fifth round, §4): a
 * `response.create` frame goes through the stages of an HTTP request — accept (its whole
 * conversation, rebuilt along the socket's own `previous_response_id` chain), identify, resolve,
 * compose and the hold (when it carries `tools`), record — and what they change in the whole
 * request is spliced into the frame; a `generate: false` pre-warm does the same on the agent's
 * `.aux` sibling; any other frame but `response.processed` is recorded there as it came.
 * Invariant: nothing is sent that is not recorded (request.json the whole conversation, frame.json
 * the exact bytes to send); a continuation of a response the socket does not hold, or a frame the
 * stages refuse, is answered in band and nothing goes upstream.
 */
import { ERROR_CODES, HoldfastError } from '../core/errors'
import type { HoldVerdict } from '../core/hold'
import type { JsonObject } from '../core/json'
import { fitName } from '../core/naming'
import { applyEdits, jsonBytes } from '../core/splice'
import { scanTopLevel, type ScannedTop } from '../core/json-scan'
import type { StepMeta } from '../../generated/meta'
import type { Identified, PluginCall } from '../../plugins/runner'
import type { ServerContext } from '../live/context'
import { FRAME_FILE, REQUEST_FILE } from '../core/layout'
import { asHoldfastError, toWireError } from '../http/respond'
import { type Accepted, accepted } from '../stages/accept'
import { compose, type Composition } from '../stages/compose'
import { hold, type Held } from '../stages/hold'
import { record, type Recorded } from '../stages/record'
import { resolve, type Route } from '../stages/resolve'
import { frameFor, type SocketSite } from './site'
import type { SocketConversation } from '../core/dialect'

/** A frame the stages took: recorded, with the bytes to send and what its answer continues. */
export interface Prepared {
  step: Recorded
  /** The exact bytes to send upstream. */
  wire: Buffer
  plugins: PluginCall | undefined
  /** The whole conversation the frame stands for (its answer's output items continue it). */
  conversation: SocketConversation | undefined
}

/** A frame answered in band instead (an unknown continuation, a refusal): nothing went upstream. */
export interface Refused {
  refused: Buffer
}

/** The agent a frame that is no turn of the conversation is recorded on (a pre-warm, another frame). */
export const auxAgent = (agent: string): string => fitName(`${agent}.aux`)

/** holdfast's refusal of a frame, in the provider's in-band error shape with holdfast's code. */
export function refusal(site: SocketSite, err: unknown): Refused {
  const e = asHoldfastError(err)
  const { status } = toWireError(e, site.dialect)
  return { refused: site.frames.inBandError(status, ERROR_CODES[e.code].type, e.code, e.message) }
}

const scanned = (bytes: Buffer): ScannedTop => {
  const top = scanTopLevel(bytes)
  if (!top.ok) throw new Error(`a whole request that parsed does not scan: ${top.error}`)
  return top
}

/** The frame's request as accept's value, with the socket's head and addressing. */
function acceptFrame(site: SocketSite, bytes: Buffer, parsed: JsonObject, top: ScannedTop): Accepted {
  return accepted(
    {
      kind: 'step',
      dialect: site.dialect,
      path: site.path,
      workspace: site.workspace,
      agent: site.agent,
      headers: site.headers,
      tokenCarried: site.tokenCarried,
    },
    bytes,
    { parsed, top },
  )
}

/** A frame without `tools`: the route's own fields only, and a verdict that says the tools were left alone. */
function leftAlone(request: Accepted, route: Route): Held {
  const edits = Object.entries(route.overrides).map(([key, value]) => ({ key, value: jsonBytes(value) }))
  const verdict: HoldVerdict = { applied: false, reason: 'tools-inherited', held: [] }
  return {
    bytes: edits.length > 0 ? applyEdits(request.raw, request.top, edits) : request.raw,
    parsed: { ...request.parsed, ...route.overrides },
    verdict,
    changes: [...route.changes],
    injected: [],
    harnessTools: [],
    keyingHeaders: request.dialect.keyingHeaders(request.headers),
  }
}

/** The frame's send-half facts in meta.json. */
function frameMeta(
  site: SocketSite,
  kind: 'create' | 'prewarm',
  frame: Buffer,
  parsed: JsonObject,
  frameItems: number,
): NonNullable<StepMeta['websocket']> {
  const chain = site.frames.continues(parsed)
  return {
    kind,
    type: String(parsed.type),
    frame_file: FRAME_FILE,
    frame_bytes: frame.length,
    ...(chain !== undefined ? { previous_response_id: chain } : {}),
    frame_items: frameItems,
    socket: site.n,
  }
}

/** A `response.create` frame (or a pre-warm) through the stages to its record; a refusal in band instead. */
export async function prepareCreate(
  ctx: ServerContext,
  site: SocketSite,
  base: (id: string) => SocketConversation | undefined,
  frame: Buffer,
  parsed: JsonObject,
  kind: 'create' | 'prewarm',
): Promise<Prepared | Refused> {
  const chain = site.frames.continues(parsed)
  const continued = chain === undefined ? undefined : base(chain)
  // The provider's own answer when its socket would not know the response either (a new socket).
  if (chain !== undefined && continued === undefined) return { refused: site.frames.notFound(chain) }
  let plugins: PluginCall | undefined
  try {
    if (ctx.closing) throw new HoldfastError('SHUTTING_DOWN', 'holdfast is shutting down; retry shortly')
    const bad = site.dialect.checkShape(parsed)
    if (bad !== undefined) throw new HoldfastError('BAD_FIELD', `the frame is refused: ${bad}`)
    const whole = site.frames.wholeRequest(frame, parsed, continued)
    const request = acceptFrame(site, whole.bytes, whole.parsed, scanned(whole.bytes))
    plugins = ctx.plugins.begin(request.facts)
    const found = await plugins.identify()
    const who: Identified = kind === 'prewarm' ? { ...found, agent: auxAgent(found.agent) } : found
    const route = await resolve(ctx, request, who, plugins)
    if (route.provider !== site.provider)
      throw new HoldfastError(
        'SOCKET_ROW_CHANGED',
        `this frame goes to provider row "${route.provider}", its socket is open to "${site.provider}": send it over HTTP (POST ${site.dialect.endpoint})`,
      )
    const carries = parsed.tools !== undefined
    const composed: Composition | undefined = carries ? compose(ctx, request, who, route) : undefined
    await ctx.backlog.room()
    const agent = ctx.agent(who.workspace, who.agent)
    const meta = frameMeta(site, kind, frame, parsed, whole.frameItems)
    return await agent.critical(async (n) => {
      const held = composed
        ? hold(ctx, request, composed, await ctx.records.previous(agent, n, site.dialect))
        : leftAlone(request, route)
      const wire = frameFor(frame, request.parsed, held.parsed)
      const step = record(ctx, { request, who, route, held }, agent, n, {
        bytes: wire,
        meta: { ...meta, frame_bytes: wire.length },
      })
      return { step, wire, plugins, conversation: { ...whole.conversation, tools: held.parsed.tools } }
    })
  } catch (err) {
    await plugins?.failed(err)
    return refusal(site, err)
  }
}

/**
 * A frame that is no `response.create` (binary, not JSON, another type) recorded on the `.aux`
 * sibling as it came: request.json is its bytes, and nothing is held or composed.
 */
export async function prepareOther(
  ctx: ServerContext,
  site: SocketSite,
  frame: Buffer,
  binary: boolean,
  type: string | undefined,
): Promise<Prepared | Refused> {
  try {
    const who: Identified = { workspace: site.workspace, agent: auxAgent(site.agent) }
    const top: ScannedTop = { ok: true, keys: new Map(), open: 0, close: 0 }
    const request = acceptFrame(site, frame, {}, top)
    const route: Route = {
      plugin: null,
      provider: site.provider,
      row: site.row,
      key: site.key,
      url: site.url,
      model: null,
      role: null,
      configCommit: null,
      configNote: null,
      overrides: {},
      changes: [],
    }
    const held: Held = {
      bytes: frame,
      parsed: {},
      verdict: { applied: false, reason: 'not-a-request', held: [] },
      changes: [],
      injected: [],
      harnessTools: [],
      keyingHeaders: {},
    }
    const meta: NonNullable<StepMeta['websocket']> = {
      kind: 'other',
      ...(type !== undefined ? { type } : {}),
      ...(binary ? { binary: true as const } : {}),
      frame_file: REQUEST_FILE,
      frame_bytes: frame.length,
      socket: site.n,
    }
    await ctx.backlog.room()
    const agent = ctx.agent(who.workspace, who.agent)
    const step = await agent.critical((n) => record(ctx, { request, who, route, held }, agent, n, { meta }))
    return { step, wire: frame, plugins: undefined, conversation: undefined }
  } catch (err) {
    return refusal(site, err)
  }
}
