/**
 * History closure (DESIGN §7): a loaded tool's name that the transcript still calls but the tools
 * about to be sent no longer declare (unloaded, and not held) is declared once more, with its
 * refusal sentence as description and `{"type":"object"}` as schema, so the provider accepts the
 * history and the model learns the tool is gone. Invariant: only names presented for a declared
 * client (`<client>_<tool>`, callable), or a harness's MCP name for one (`mcp__holdfast__<client>_<tool>`,
 * core/harness-tools), are closed; every byte outside `tools` is kept, and the
 * existing tools bytes too (closures are appended inside the array). No clients → nothing to do.
 */
import type { Dialect } from './dialect'
import type { Json, JsonObject } from './json'
import { harnessPrefixes, withoutHarnessPrefix } from './harness-tools'
import { isCallable } from './naming'
import { applyEdits, jsonBytes } from './splice'
import { scanTopLevel } from './json-scan'
import { notLoaded } from './tool-sentences'

/** True when `name` is `<client>_<tool>` for one of `clients` and a provider could accept it. */
export function presentedByClient(name: string, clients: readonly string[]): boolean {
  return isCallable(name) && clients.some((c) => name.length > c.length + 1 && name.startsWith(`${c}_`))
}

/**
 * The names to close and their declarations, in the order the transcript first calls them: names
 * `body`'s transcript calls, presented for one of `clients`, that `body.tools` does not declare.
 */
export function closeHistory(
  dialect: Dialect,
  body: JsonObject,
  clients: readonly string[],
): { names: string[]; tools: JsonObject[] } {
  if (clients.length === 0) return { names: [], tools: [] }
  const calls = dialect.calledToolNames(body)
  const tools: readonly Json[] = Array.isArray(body.tools) ? body.tools : []
  const declared = new Set(tools.map((t) => dialect.toolName(t)).filter((n) => n !== undefined))
  // A harness's own name for a loaded tool (mcp__holdfast__fx_echo) is closed like the presented one.
  const prefixes = harnessPrefixes([...declared, ...calls])
  const called = calls.filter(
    (n) => isCallable(n) && presentedByClient(withoutHarnessPrefix(n, prefixes), clients),
  )
  if (called.length === 0) return { names: [], tools: [] }
  const names = called.filter((n) => !declared.has(n))
  return {
    names,
    tools: names.map((n) =>
      dialect.tool({ name: n, description: notLoaded(n), input_schema: { type: 'object' } }),
    ),
  }
}

/**
 * `bytes`/`parsed` (the request about to be sent) with the closure tools appended to `tools`;
 * undefined when nothing needs closing or `tools` is not an array (left for the provider to refuse).
 */
export function withHistoryClosed(
  dialect: Dialect,
  bytes: Buffer,
  parsed: JsonObject,
  clients: readonly string[],
): { bytes: Buffer; parsed: JsonObject; names: string[] } | undefined {
  if (parsed.tools !== undefined && !Array.isArray(parsed.tools)) return undefined
  const closure = closeHistory(dialect, parsed, clients)
  if (closure.names.length === 0) return undefined
  const top = scanTopLevel(bytes)
  if (!top.ok) return undefined
  const existing = Array.isArray(parsed.tools) ? parsed.tools : []
  const span = top.keys.get('tools')
  const added = jsonBytes(closure.tools).subarray(1, -1) // the elements, without [ and ]
  let value: Buffer
  if (span === undefined || existing.length === 0) value = jsonBytes(closure.tools)
  else {
    const old = bytes.subarray(span.valueStart, span.valueEnd)
    const close = old.lastIndexOf(0x5d) // the array's own "]"
    value = Buffer.concat([old.subarray(0, close), Buffer.from(','), added, old.subarray(close)])
  }
  const out = applyEdits(bytes, top, [{ key: 'tools', value }])
  const tools: Json[] = [...existing, ...closure.tools]
  return { bytes: out, parsed: { ...parsed, tools }, names: closure.names }
}
