/**
 * A long conversation, as Claude Code sends one (bench/long.ts and the storage tests): each step
 * is the previous request plus an assistant message (text and a `tool_use`) and a user message (a
 * `tool_result` of a few KB of file-like text), the `cache_control` breakpoint moved to the new last
 * block; ~41 KB at step 1 (7 KB of system in two blocks, 18 tools) growing by ~5 KB a step. The
 * same seed gives the same bytes every run.
 */
import { rng } from './fuzz'

const WORDS =
  'const let return function import export from if else for while await async type interface string number boolean null undefined true false this new class extends implements private readonly public static void Promise Buffer error result value index length push map filter reduce join split slice path file agent step commit record journal request response'.split(
    ' ',
  )

/** `bytes` of source-code-like text: indented lines of identifiers and punctuation. */
export function codeText(rand: () => number, bytes: number): string {
  const lines: string[] = []
  let n = 0
  while (n < bytes) {
    const indent = '  '.repeat(Math.floor(rand() * 4))
    const words = Array.from(
      { length: 3 + Math.floor(rand() * 8) },
      () => WORDS[Math.floor(rand() * WORDS.length)],
    )
    const line = `${indent}${words.join(rand() < 0.5 ? ' ' : '.')}${rand() < 0.3 ? ' {' : rand() < 0.5 ? ';' : ')'}`
    lines.push(line)
    n += line.length + 1
  }
  return lines.join('\n').slice(0, bytes)
}

type Block = Record<string, unknown>
interface Message {
  role: 'user' | 'assistant'
  content: Block[]
}

/** The conversation's request at each step, built incrementally (step i's request as bytes). */
export class Conversation {
  private readonly rand: () => number
  private readonly system: Block[]
  private readonly tools: Block[]
  private readonly messages: Message[]
  private n = 0

  constructor(seed: number) {
    this.rand = rng(seed) // the same conversation every run
    this.system = [
      { type: 'text', text: `You are an agent. ${codeText(this.rand, 3000)}` },
      { type: 'text', text: codeText(this.rand, 4000), cache_control: { type: 'ephemeral' } },
    ]
    this.tools = Array.from({ length: 18 }, (_, i) => ({
      name: `Tool${i}`,
      description: codeText(this.rand, 1400),
      input_schema: {
        type: 'object',
        properties: {
          file_path: { type: 'string', description: codeText(this.rand, 120) },
          pattern: { type: 'string', description: codeText(this.rand, 120) },
        },
        required: ['file_path'],
      },
    }))
    this.messages = [
      { role: 'user', content: [{ type: 'text', text: `Task ${seed}: fix the failing test.` }] },
    ]
  }

  /** The next step's request: the previous one plus a tool call and its result (none at step 1). */
  next(): Buffer {
    this.n++
    if (this.n > 1) {
      const id = `toolu_${String(this.n).padStart(6, '0')}`
      this.messages.push({
        role: 'assistant',
        content: [
          { type: 'text', text: `Step ${this.n}: ${codeText(this.rand, 200)}` },
          { type: 'tool_use', id, name: 'Tool0', input: { file_path: `/src/file${this.n}.ts` } },
        ],
      })
      this.messages.push({
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: id, content: codeText(this.rand, 4700) }],
      })
    }
    // The breakpoint moves to the new last block.
    for (const m of this.messages) for (const b of m.content) delete b.cache_control
    const last = this.messages.at(-1) as Message
    ;(last.content.at(-1) as Block).cache_control = { type: 'ephemeral' }
    return Buffer.from(
      JSON.stringify({
        model: 'claude-sonnet-4-5',
        max_tokens: 64,
        stream: true,
        system: this.system,
        tools: this.tools,
        messages: this.messages,
      }),
    )
  }
}
