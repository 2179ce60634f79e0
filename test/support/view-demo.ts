/**
 * A workspace recorded through the real server and the fake upstream for the web view's tests, its
 * screenshots and its bench: a main chain whose tools lose one (a held step) and whose system
 * prompt changes (a miss), a subagent and a side request split off by name, roles declared on
 * config/default for Fork from here. Invariant: every step goes through `holdfast serve`'s HTTP
 * endpoint as a client sends it; nothing is written around the proxy.
 */
import { loadConfig } from '../../proxy/store/config'
import { setRole } from '../../proxy/store/config/edit'
import { openRepo } from '../../proxy/store/git'

/** What the demo needs of a running proxy: the test harness's, or a bench's `holdfast serve` (bench/procs). */
export interface Running {
  url: string
  home: string
  /** The bare repository of workspace `ws`. */
  repo(ws?: string): string
  /** Resolves once every answered step is committed. */
  settled(): Promise<unknown>
}

export const KEY_ENV = 'HF_VIEW_KEY'

/** Provider rows with an api_key_env (attempts need one): `keyed` on the fake's anthropic endpoint. */
export const keyedRows = (anthropicBaseUrl: string) => ({
  keyed: { dialect: 'anthropic' as const, base_url: anthropicBaseUrl, api_key_env: KEY_ENV },
})

const tool = (name: string) => ({
  name,
  description: `The ${name} tool: ${'does its job carefully. '.repeat(4)}`,
  input_schema: { type: 'object', properties: { path: { type: 'string' } } },
})

const SYSTEM = `You are a careful coding agent working in a repository.\n${'Read before you write. Prefer small, reviewed changes.\n'.repeat(30)}`

export interface Sent {
  agent: string
  status: number
}

/** Send one anthropic step for `agent` in `ws`, as a client would. */
export async function sendStep(
  p: Pick<Running, 'url'>,
  ws: string,
  agent: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<Sent> {
  const res = await fetch(`${p.url}/w/${encodeURIComponent(ws)}/a/${encodeURIComponent(agent)}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', ...headers },
    body: JSON.stringify(body),
  })
  await res.arrayBuffer()
  return { agent, status: res.status }
}

/** A conversation of `turns` user turns, each answered (an assistant text, and a tool call with its result every other turn). */
export function conversation(turns: number): object[] {
  const out: object[] = []
  for (let i = 1; i <= turns; i++) {
    if (i % 2 === 0) {
      out.push({
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: `toolu_${i - 1}`, content: `file ${i - 1}: 42 lines` }],
      })
    } else out.push({ role: 'user', content: `Turn ${i}: look at src/file${i}.ts and tell me what it does.` })
    if (i < turns) {
      out.push(
        i % 2 === 1
          ? {
              role: 'assistant',
              content: [
                { type: 'text', text: `Reading file ${i}.` },
                { type: 'tool_use', id: `toolu_${i}`, name: 'Read', input: { path: `src/file${i}.ts` } },
              ],
            }
          : { role: 'assistant', content: `File ${i - 1} exports one function.` },
      )
    }
  }
  // The breakpoint on the last message, as Claude Code moves it every turn.
  const last = out[out.length - 1] as { content: unknown }
  const blocks =
    typeof last.content === 'string' ? [{ type: 'text', text: last.content }] : (last.content as object[])
  last.content = blocks.map((b, i) =>
    i === blocks.length - 1 ? { ...b, cache_control: { type: 'ephemeral' } } : b,
  )
  return out
}

/** One main-chain step: turn `i`, the given tools, the system prompt (changed when `edited`). */
export function mainStep(i: number, tools: string[], edited = false): Record<string, unknown> {
  return {
    model: 'claude-sonnet-4-5',
    max_tokens: 64,
    system: [
      {
        type: 'text',
        text: edited ? SYSTEM.replace('careful', 'thorough') : SYSTEM,
        cache_control: { type: 'ephemeral' },
      },
    ],
    tools: tools.map(tool),
    messages: conversation(i),
  }
}

/**
 * Record the demo workspace `ws`: main 001–006 (003 drops a tool: held; 005 edits the system: a
 * miss), `main.sub-ab12` (two steps), `main.aux` (one). Declares roles reviewer and writer.
 */
export async function recordDemo(p: Running, ws = 'demo'): Promise<void> {
  const all = ['Read', 'Write', 'Bash', 'notes_search']
  const less = ['Read', 'Write', 'Bash']
  const plan: [number, string[], boolean][] = [
    [1, all, false],
    [2, all, false],
    [3, less, false],
    [4, less, false],
    [5, less, true],
    [6, less, true],
  ]
  for (const [i, tools, edited] of plan) await sendStep(p, ws, 'main', mainStep(i, tools, edited))
  for (let i = 1; i <= 2; i++)
    await sendStep(p, ws, 'main.sub-ab12', {
      model: 'claude-haiku-4-5',
      max_tokens: 64,
      system: 'You explore one directory and report.',
      messages: conversation(i),
    })
  await sendStep(p, ws, 'main.aux', {
    model: 'claude-haiku-4-5',
    max_tokens: 16,
    messages: [{ role: 'user', content: 'A five-word title for this conversation?' }],
  })
  await p.settled()
  const rows = loadConfig(p.home).providers
  const repo = openRepo(p.repo(ws))
  await setRole(repo, 'default', 'reviewer', { provider: 'keyed', model: 'claude-haiku-4-5' }, rows)
  await setRole(repo, 'default', 'writer', { provider: 'keyed', model: 'claude-opus-4-5' }, rows)
}
