/**
 * Loaded tools a harness declares itself (DESIGN §7, §13: no double declaration). A harness
 * connected to the agent's MCP endpoint lists `clients` and the loaded set there and declares them
 * under its own MCP naming: Claude Code's `mcp__<server>__<tool>`, e.g. `mcp__holdfast__fx_echo`.
 * Invariant: a server counts as holdfast's only when the request also declares its `clients`
 * tool (`mcp__<server>__clients`), or it is named `holdfast` (what `holdfast run` configures), so
 * another MCP server's tool of the same name is never taken for a loaded one. Pure.
 */

/** The server name `holdfast run -- claude` gives the agent's MCP endpoint. */
export const HARNESS_SERVER = 'holdfast'

const CLIENTS_TOOL = /^mcp__(.+)__clients$/

/** `mcp__<server>__` for every server whose `clients` tool is among `names`, and for `holdfast`. */
export function harnessPrefixes(names: Iterable<string>): string[] {
  const prefixes = new Set([`mcp__${HARNESS_SERVER}__`])
  for (const n of names) {
    const m = CLIENTS_TOOL.exec(n)
    if (m) prefixes.add(`mcp__${m[1]}__`)
  }
  return [...prefixes]
}

/** The harness's own name for `presented` among `declared`, under one of `prefixes`, if any. */
export function harnessName(
  presented: string,
  declared: ReadonlySet<string>,
  prefixes: readonly string[],
): string | undefined {
  for (const p of prefixes) if (declared.has(p + presented)) return p + presented
  return undefined
}

/** `name` without its harness prefix when it has one of `prefixes`; otherwise `name` itself. */
export function withoutHarnessPrefix(name: string, prefixes: readonly string[]): string {
  const p = prefixes.find((x) => name.startsWith(x) && name.length > x.length)
  return p === undefined ? name : name.slice(p.length)
}
