/**
 * A harness on holdfast's MCP endpoint (DESIGN §7 and its amendments: no injection for it). A
 * harness connected to the agent's MCP endpoint lists `clients` and the loaded set there and
 * declares them under its own MCP naming: Claude Code's `mcp__<server>__<tool>`, e.g.
 * `mcp__holdfast__fx_echo`. A request shows it is on the endpoint when it declares, or names as a
 * deferred tool, `mcp__holdfast__…` or any `mcp__<server>__clients`. Invariant: a server counts as
 * holdfast's only when it is named `holdfast` (what `holdfast run` configures) or its `clients`
 * tool is there too, so another MCP server's tool of the same name is never taken for a loaded
 * one. Pure; no names, no endpoint.
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

/** True when `names` (declared or deferred tools) show a harness on holdfast's MCP endpoint. */
export function onHoldfastEndpoint(names: Iterable<string>): boolean {
  for (const n of names) {
    if (n.startsWith(`mcp__${HARNESS_SERVER}__`) || CLIENTS_TOOL.test(n)) return true
  }
  return false
}

const ANNOUNCED_NAME = /^mcp__[A-Za-z0-9_-]+__[A-Za-z0-9_-]+$/
const GONE = /no longer available/i

/**
 * The MCP tools a harness with deferred tools (Claude Code 2.1.332's tool search) announces by
 * name in its mid-conversation system entries, one name a line — "The following deferred tools
 * are now available via ToolSearch: …" — without declaring them in `tools` until the model fetched
 * them. An announcement that they are "no longer available" takes them back. Later entries win.
 */
export function announcedTools(systemTexts: Iterable<string>): Set<string> {
  const names = new Set<string>()
  for (const text of systemTexts) {
    if (!text.includes('mcp__')) continue
    // Each paragraph is one announcement: a heading line, then one name a line.
    for (const paragraph of text.split(/\n\s*\n/)) {
      const lines = paragraph.split('\n').map((l) => l.trim())
      const gone = GONE.test(lines[0] ?? '')
      for (const line of lines) {
        if (!ANNOUNCED_NAME.test(line)) continue
        if (gone) names.delete(line)
        else names.add(line)
      }
    }
  }
  return names
}
