/**
 * Responses requests for the integration tests: a POST to `<base>/v1/responses` as a client sends
 * it (the whole answer's bytes kept, to compare with the record), a Codex-like request body, and
 * the output items of an answer (JSON or the event stream) to append to the next request's input.
 * Invariant: helpers only send and read; the conversation's state is the caller's.
 */
export type Item = Record<string, unknown>

export interface Answered {
  status: number
  headers: Headers
  /** The whole answer, exactly as the client received it. */
  bytes: Buffer
}

/** POST `body` to `<base>/v1/responses` (`base` may carry the /w/<ws>/a/<agent> prefix). */
export async function postResponses(
  base: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Answered> {
  const res = await fetch(`${base}/v1/responses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-client', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) }
}

/** A function tool in the Responses format. */
export const fn = (name: string): Item => ({
  type: 'function',
  name,
  description: `The ${name} tool.`,
  strict: false,
  parameters: { type: 'object', properties: {} },
})

export const developer = (text: string): Item => ({
  type: 'message',
  role: 'developer',
  content: [{ type: 'input_text', text }],
})
export const user = (text: string): Item => ({
  type: 'message',
  role: 'user',
  content: [{ type: 'input_text', text }],
})

/** A request shaped like Codex's: stateless, streamed, its system in a leading developer item. */
export function codexLike(input: Item[], tools: Item[], extra: Item = {}): Item {
  return {
    model: 'gpt-5',
    input,
    tools,
    tool_choice: 'auto',
    parallel_tool_calls: true,
    reasoning: { effort: 'medium' },
    store: false,
    stream: true,
    include: ['reasoning.encrypted_content'],
    prompt_cache_key: 'session-1',
    ...extra,
  }
}

/** The output items of an answer: a JSON response's `output`, or the `response.completed` event's. */
export function outputOf(bytes: Buffer): Item[] {
  const text = bytes.toString('utf8')
  if (text.trimStart().startsWith('{')) return (JSON.parse(text) as { output: Item[] }).output
  for (const line of text.split('\n')) {
    if (!line.startsWith('data: ')) continue
    const e = JSON.parse(line.slice(6)) as { type: string; response?: { output: Item[] } }
    if (e.type === 'response.completed' && e.response) return e.response.output
  }
  throw new Error('the answer has no response.completed event')
}

/** A `function_call_output` answering each function call among `items`. */
export function callOutputs(items: Item[], output: string): Item[] {
  return items
    .filter((i) => i.type === 'function_call')
    .map((i) => ({ type: 'function_call_output', call_id: i.call_id, output }))
}
