/**
 * compose (DESIGN §5.4, §7): the client's body with the route's fields, plus the agent's loaded
 * tools in the dialect's tool format, appended after the client's own tools in loaded-set order,
 * and the row's per-agent prompt cache key where the dialect has one. A harness on holdfast's MCP
 * endpoint gets no loaded tool at all: it declares them itself once `tools/list_changed` reached
 * it, under names it can run (§7 amended). Invariant: one splice of the client's bytes (fields
 * outside the changed ones keep their bytes); a body nothing changed is the client's own buffer;
 * a client's own tool of the same name wins over the loaded one. A row with `diagnostics: add`
 * asks the provider to compare the request with the agent's previous answer when it did not ask.
 */
import type { Json, JsonObject } from '../core/json'
import { announcedTools, harnessName, harnessPrefixes, onHoldfastEndpoint } from '../core/harness-tools'
import { presentedName, presentedTool } from '../core/loaded-set'
import { applyEdits, jsonBytes, toolsEdit } from '../core/splice'
import { type ScannedTop } from '../core/json-scan'
import type { Change } from '../../generated/meta'
import type { Identified } from '../../plugins/runner'
import { readLoadedSet } from '../store/loaded-sets'
import type { ServerContext } from '../live/context'
import type { Accepted } from './accept'
import type { Route } from './resolve'

/** compose's value: the body the hold compares and, unless it holds, sends. */
export interface Composition {
  bytes: Buffer
  parsed: JsonObject
  /** `top` only when it is the client's body (a spliced one is scanned if the hold needs it). */
  top?: ScannedTop
  /** The route's changes, then compose's. */
  changes: Change[]
  /** Presented names of the loaded tools appended. */
  injected: string[]
  /** Loaded tools the client already declared under its MCP naming (`mcp__holdfast__fx_echo`). */
  harnessTools: string[]
}

/** How long compose waits for the previous step's answer id (a `diagnostics: add` row) before it names the one before. */
export const ANSWER_ID_WAIT_MS = 250

/**
 * Before compose, for a `diagnostics: add` row on a request that does not ask: wait (at most
 * ANSWER_ID_WAIT_MS) for the agent's previous step's finish, whose answer id the commit worker
 * reads, so a client that sends its next request the moment an answer ends is still compared
 * with that answer and not the one before it.
 */
export async function answerIdKnown(
  ctx: ServerContext,
  request: Accepted,
  who: Identified,
  route: Route,
): Promise<void> {
  const comparison = request.dialect.cacheComparison
  if (route.row.diagnostics !== 'add' || !comparison || comparison.of(request.parsed).asked) return
  const finishing = ctx.agent(who.workspace, who.agent).lastFinish
  if (!finishing) return
  let timer: NodeJS.Timeout | undefined
  await Promise.race([finishing, new Promise((resolve) => (timer = setTimeout(resolve, ANSWER_ID_WAIT_MS)))])
  clearTimeout(timer)
}

export function compose(ctx: ServerContext, request: Accepted, who: Identified, route: Route): Composition {
  const { dialect, parsed } = request
  const overrides: JsonObject = { ...route.overrides }
  const changes = [...route.changes]
  const injected: string[] = []
  const harnessTools: string[] = []
  const loaded = readLoadedSet(ctx.home, who.workspace, who.agent)
  if (loaded.length > 0) {
    const clientTools = Array.isArray(parsed.tools) ? parsed.tools : []
    const clientNames = new Set(clientTools.map((t) => dialect.toolName(t)).filter((n) => n !== undefined))
    // Deferred tools (named in system entries, declared only once fetched) count as the harness's.
    const systemTexts = dialect
      .messages(parsed)
      .filter((m) => dialect.roleOf(m) === 'system')
      .map((m) => dialect.textOf(m))
    const harnessNames = new Set([...clientNames, ...announcedTools(systemTexts)])
    const prefixes = harnessPrefixes(harnessNames)
    const endpoint = onHoldfastEndpoint(harnessNames)
    const added: Json[] = []
    const clashes: string[] = []
    for (const entry of loaded) {
      const name = presentedName(entry)
      // Declared by the harness itself through holdfast's MCP endpoint: never a second time.
      const own = harnessName(name, harnessNames, prefixes)
      if (clientNames.has(name)) clashes.push(name)
      else if (own !== undefined) harnessTools.push(own)
      // On the endpoint but not listed again yet: injecting it would declare a name it cannot run.
      else if (endpoint) continue
      else {
        added.push(dialect.tool(presentedTool(entry)))
        injected.push(name)
      }
    }
    if (added.length > 0) {
      overrides.tools = [...clientTools, ...added]
      changes.push({ field: 'tools', why: `appended loaded tools: ${injected.join(', ')}` })
    }
    if (clashes.length > 0) {
      changes.push({
        field: 'tools',
        why: `kept the client's own tool over the loaded one: ${clashes.join(', ')}`,
      })
    }
  }
  const cacheKeyField = dialect.promptCacheKeyField
  if (cacheKeyField && route.row.prompt_cache_key === 'agent' && parsed[cacheKeyField] === undefined) {
    overrides[cacheKeyField] = `${who.workspace}/${who.agent}`
    changes.push({ field: cacheKeyField, why: `provider row "${route.provider}" sets it per agent` })
  }
  // A `diagnostics: add` row asks the provider to compare with the agent's previous answer.
  const comparison = dialect.cacheComparison
  if (route.row.diagnostics === 'add' && comparison && !comparison.of(parsed).asked) {
    const last = ctx.agent(who.workspace, who.agent).lastAnswer
    const asking = comparison.asking(parsed, last?.id ?? null)
    if (asking) {
      overrides[asking.key] = asking.value
      changes.push({
        field: asking.key,
        why: `provider row "${route.provider}" sets diagnostics: add (${last ? `compared with ${last.id}` : 'no earlier answer yet'})`,
      })
    }
  }
  const edits = Object.entries(overrides).map(([key, value]) =>
    key === 'tools' ? toolsEdit(value as Json[]) : { key, value: jsonBytes(value) },
  )
  if (edits.length === 0)
    return { bytes: request.raw, parsed, top: request.top, changes, injected, harnessTools }
  return {
    bytes: applyEdits(request.raw, request.top, edits),
    parsed: { ...parsed, ...overrides },
    changes,
    injected,
    harnessTools,
  }
}
