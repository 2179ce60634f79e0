/**
 * The loaded set (DESIGN §7): the tools one agent has made callable, each frozen as its client
 * advertised it at the load act. Pure rules only; the file `<home>/loaded/<ws>/<agent>.json` is
 * read and written by `store/loaded-sets`. Invariant: every entry's presented name is
 * `<client>_<tool>`, callable and unique, and only load/unload change a set. An empty set is `[]`.
 */
import type { Json, JsonObject } from './json'
import { isObject } from './json'
import { checkName, isCallable, isComponent } from './naming'
import { notAdvertised } from './tool-sentences'

/** One element of a client's advertisement: what the model is shown for the tool. */
export interface AdvertisedTool {
  name: string
  description: string
  input_schema: JsonObject
}

/** One loaded tool: the client that advertises it and its definition as frozen at the load act. */
export interface LoadedEntry {
  client: string
  tool: AdvertisedTool
}

export type Decoded<T> = { ok: true; value: T } | { ok: false; error: string }

const CALLABLE_RULE = 'a tool name a provider accepts is 1 to 64 ASCII letters, digits, "_" or "-"'

/** The name the model sees and calls: `<client>_<tool>`, prefixed always (never only when ambiguous). */
export function presentedName(e: LoadedEntry): string {
  return `${e.client}_${e.tool.name}`
}

/** A loaded tool as presented to the model: its presented name and its frozen definition. */
export function presentedTool(e: LoadedEntry): { name: string; description: string; input_schema: Json } {
  return { name: presentedName(e), description: e.tool.description, input_schema: e.tool.input_schema }
}

/** Plain code-unit order, the order a loaded set is kept and presented in. */
function byPresentedName(a: LoadedEntry, b: LoadedEntry): number {
  const x = presentedName(a)
  const y = presentedName(b)
  return x < y ? -1 : x > y ? 1 : 0
}

function encodeTool(t: AdvertisedTool): JsonObject {
  return { name: t.name, description: t.description, input_schema: t.input_schema }
}

/** The set as stored: `[{client, tool: {name, description, input_schema}}]`, in the given order. */
export function encodeLoadedSet(entries: readonly LoadedEntry[]): Json {
  return entries.map((e) => ({ client: e.client, tool: encodeTool(e.tool) }))
}

function unknownKey(o: JsonObject, known: readonly string[]): string | undefined {
  return Object.keys(o).find((k) => !known.includes(k))
}

const TOOL_KEYS = ['name', 'description', 'input_schema'] as const
const ENTRY_KEYS = ['client', 'tool'] as const

/**
 * One advertised element, strictly: exactly `name` (a path component), `description` (a string,
 * possibly empty) and `input_schema` (a JSON object). Errors are one sentence naming the key.
 */
export function decodeAdvertisedTool(v: unknown): Decoded<AdvertisedTool> {
  if (!isObject(v)) return { ok: false, error: 'not a JSON object' }
  for (const key of TOOL_KEYS) {
    if (!Object.hasOwn(v, key)) return { ok: false, error: `missing field ${JSON.stringify(key)}` }
  }
  const { name, description, input_schema } = v
  if (typeof name !== 'string') return { ok: false, error: 'field "name" is not a string' }
  if (!isComponent(name)) {
    return {
      ok: false,
      error: `field "name" is ${JSON.stringify(name)}, which is not one path component (non-empty, not "." or "..", no "/", "\\" or NUL)`,
    }
  }
  if (typeof description !== 'string') return { ok: false, error: 'field "description" is not a string' }
  if (!isObject(input_schema)) return { ok: false, error: 'field "input_schema" is not a JSON object' }
  const extra = unknownKey(v, TOOL_KEYS)
  if (extra !== undefined) return { ok: false, error: `unknown field ${JSON.stringify(extra)}` }
  return { ok: true, value: { name, description, input_schema } }
}

/**
 * A stored loaded set, strictly: an array of `{client, tool}` objects whose client is a usable
 * client name and whose presented names are callable and unique. Errors start `loaded: ` and
 * name the element and the key.
 */
export function decodeLoadedSet(v: unknown): Decoded<LoadedEntry[]> {
  if (!Array.isArray(v)) return { ok: false, error: 'loaded: not an array' }
  const out: LoadedEntry[] = []
  const seen = new Map<string, number>()
  for (let i = 0; i < v.length; i++) {
    const row: unknown = v[i]
    const at = `loaded: element ${i}`
    if (!isObject(row)) return { ok: false, error: `${at} is not a JSON object` }
    for (const key of ENTRY_KEYS) {
      if (!Object.hasOwn(row, key)) return { ok: false, error: `${at}: missing field ${JSON.stringify(key)}` }
    }
    const client = row.client
    if (typeof client !== 'string') return { ok: false, error: `${at}: field "client" is not a string` }
    const bad = checkName('client', client)
    if (bad !== undefined) return { ok: false, error: `${at}: field "client": ${bad}` }
    const extra = unknownKey(row, ENTRY_KEYS)
    if (extra !== undefined) return { ok: false, error: `${at}: unknown field ${JSON.stringify(extra)}` }
    const tool = decodeAdvertisedTool(row.tool)
    if (!tool.ok) return { ok: false, error: `${at}: field "tool": ${tool.error}` }
    const entry: LoadedEntry = { client, tool: tool.value }
    const presented = presentedName(entry)
    if (!isCallable(presented)) {
      return {
        ok: false,
        error: `${at}: presented name ${JSON.stringify(presented)} is not callable: ${CALLABLE_RULE}`,
      }
    }
    const first = seen.get(presented)
    if (first !== undefined) {
      return {
        ok: false,
        error: `${at}: presented name ${JSON.stringify(presented)} repeats element ${first}`,
      }
    }
    seen.set(presented, i)
    out.push(entry)
  }
  return { ok: true, value: out }
}

/** `existing` plus `added`, one entry per presented name (a later entry wins), sorted by presented name. */
export function unionLoaded(existing: readonly LoadedEntry[], added: readonly LoadedEntry[]): LoadedEntry[] {
  const byName = new Map<string, LoadedEntry>()
  for (const e of existing) byName.set(presentedName(e), e)
  for (const e of added) byName.set(presentedName(e), e)
  return [...byName.values()].sort(byPresentedName)
}

/**
 * The entries a load of `toolNames` from `client` adds, whole or nothing: the client name must be
 * usable, at least one tool named, each advertised by the client now (exactly once), and each
 * presented name callable. A refusal lists every problem, joined with "; ". Repeated names count
 * once. Definitions are copied, so a later change to the advertisement cannot reach them.
 */
export function planLoad(
  client: string,
  advertised: readonly AdvertisedTool[],
  toolNames: readonly string[],
): Decoded<LoadedEntry[]> {
  const badClient = checkName('client', client)
  if (badClient !== undefined) return { ok: false, error: badClient }
  if (toolNames.length === 0) {
    return { ok: false, error: `a load from client ${JSON.stringify(client)} must name at least one tool` }
  }
  const problems: string[] = []
  const planned: LoadedEntry[] = []
  for (const name of new Set(toolNames)) {
    const badTool = checkName('tool', name)
    if (badTool !== undefined) {
      problems.push(badTool)
      continue
    }
    const matches = advertised.filter((t) => t.name === name)
    const tool = matches[0]
    if (tool === undefined) {
      problems.push(notAdvertised(client, name))
      continue
    }
    if (matches.length > 1) {
      problems.push(
        `client ${JSON.stringify(client)} advertises tool ${JSON.stringify(name)} ${matches.length} times, so which definition to load is ambiguous`,
      )
      continue
    }
    const frozen = {
      name: tool.name,
      description: tool.description,
      input_schema: structuredClone(tool.input_schema),
    }
    const entry: LoadedEntry = { client, tool: frozen }
    const presented = presentedName(entry)
    if (!isCallable(presented)) {
      problems.push(
        `presented name ${JSON.stringify(presented)} is not callable (${presented.length} characters): ${CALLABLE_RULE}`,
      )
      continue
    }
    planned.push(entry)
  }
  if (problems.length > 0) return { ok: false, error: problems.join('; ') }
  return { ok: true, value: planned.sort(byPresentedName) }
}

/**
 * The set left after unloading `presentedNames` from `existing`, whole or nothing: at least one
 * name, and every name loaded now. A refusal lists every name that is not loaded, joined with "; ".
 */
export function planUnload(
  existing: readonly LoadedEntry[],
  presentedNames: readonly string[],
): Decoded<LoadedEntry[]> {
  if (presentedNames.length === 0) return { ok: false, error: 'an unload must name at least one tool' }
  const loaded = new Set(existing.map(presentedName))
  const gone = new Set(presentedNames)
  const missing = [...gone].filter((n) => !loaded.has(n))
  if (missing.length > 0) {
    return {
      ok: false,
      error: missing.map((n) => `no tool ${JSON.stringify(n)} is loaded for this agent`).join('; '),
    }
  }
  return { ok: true, value: existing.filter((e) => !gone.has(presentedName(e))) }
}
