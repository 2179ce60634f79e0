/**
 * The Responses WebSocket, measured (issue: Codex on its own transport): a 20-turn Codex-shaped
 * session (each turn a tool output of a few KB and the model's answer) sent as Codex sends it on
 * its WebSocket (`response.create` with `previous_response_id` and only the new items) and as its
 * HTTP fallback re-sends it (`POST /v1/responses` with the whole input every turn): bytes uploaded
 * per turn, both ways. Then the added latency per frame: the same frames on one socket direct to
 * the fake WebSocket provider and through holdfast, in alternating rounds, p50 and p99. Nothing is
 * asserted: the figures go to docs/benchmarks.md with the command (`npm run bench`, which runs this
 * as one of its cases, or `node -r ./scripts/register.js bench/websocket.ts` after a build).
 */
import { performance } from 'node:perf_hooks'
import { WebSocket } from 'ws'
import { startFakeResponsesWs } from '../test/support/fake-responses-ws'
import { pct, serveHome } from './procs'

const TURNS = 20
const TOOL_OUTPUT_BYTES = 4096
const INSTRUCTIONS = 'You are Codex, a coding agent. '.repeat(200)
const TOOLS = [
  {
    type: 'function',
    name: 'exec_command',
    parameters: { type: 'object', properties: { cmd: { type: 'string' } } },
  },
]

interface Item {
  [k: string]: unknown
}

const userTurn = (i: number): Item => ({
  type: 'function_call_output',
  call_id: `call_${i}`,
  output: `${i}: ${'x'.repeat(TOOL_OUTPUT_BYTES)}`,
})
const first: Item = {
  type: 'message',
  role: 'user',
  content: [{ type: 'input_text', text: 'Run the tests and fix what fails.' }],
}
const request = (input: Item[], extra: object = {}): Record<string, unknown> => ({
  model: 'gpt-fake-1',
  instructions: INSTRUCTIONS,
  tools: TOOLS,
  stream: true,
  store: false,
  input,
  ...extra,
})

/** One socket's session: each frame's bytes and the time to its `response.completed`, ms. */
async function socketSession(
  url: string,
  headers: Record<string, string>,
): Promise<{ frameBytes: number[]; ms: number[] }> {
  const ws = new WebSocket(url, { headers, perMessageDeflate: false })
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve())
    ws.once('error', reject)
  })
  const frameBytes: number[] = []
  const ms: number[] = []
  let previous: string | undefined
  for (let i = 0; i < TURNS; i++) {
    const items = i === 0 ? [first] : [userTurn(i)]
    const frame = Buffer.from(
      JSON.stringify({
        type: 'response.create',
        ...request(items, previous ? { previous_response_id: previous } : {}),
      }),
    )
    const t0 = performance.now()
    const done = new Promise<string>((resolve, reject) => {
      const onMessage = (data: Buffer): void => {
        const e = JSON.parse(data.toString('utf8')) as { type: string; response?: { id: string } }
        if (e.type === 'response.completed') {
          ws.off('message', onMessage)
          resolve(e.response?.id ?? '')
        } else if (e.type === 'error') {
          ws.off('message', onMessage)
          reject(new Error(data.toString('utf8')))
        }
      }
      ws.on('message', onMessage)
    })
    ws.send(frame, { binary: false }) // a text frame, as Codex sends
    previous = await done
    ms.push(performance.now() - t0)
    frameBytes.push(frame.length)
  }
  ws.close()
  return { frameBytes, ms }
}

/** The bytes the HTTP fallback uploads per turn: the whole input, outputs included, every time. */
function fallbackBytes(): number[] {
  const input: Item[] = []
  const out: number[] = []
  for (let i = 0; i < TURNS; i++) {
    input.push(i === 0 ? first : userTurn(i))
    out.push(Buffer.byteLength(JSON.stringify(request(input))))
    // The model's answer comes back into the input: a function call of ~60 bytes.
    input.push({
      type: 'function_call',
      call_id: `call_${i + 1}`,
      name: 'exec_command',
      arguments: '{"cmd":"npm test"}',
    })
  }
  return out
}

export interface WebSocketFigures {
  turns: number
  wsBytesTotal: number
  httpBytesTotal: number
  wsBytesLastTurn: number
  httpBytesLastTurn: number
  directP50: number
  holdfastP50: number
  directP99: number
  holdfastP99: number
}

export async function websocketCase(rounds = 4): Promise<WebSocketFigures> {
  const fake = await startFakeResponsesWs({
    answer: () => ({ toolCalls: [{ name: 'exec_command', arguments: { cmd: 'npm test' } }] }),
  })
  const served = await serveHome({
    anthropicBaseUrl: 'http://127.0.0.1:9',
    openaiBaseUrl: fake.openaiBaseUrl,
  })
  try {
    const direct = `${fake.url.replace(/^http/, 'ws')}/v1/responses`
    const via = `${served.url.replace(/^http/, 'ws')}/w/bench/a/codex/v1/responses`
    const auth = { authorization: 'Bearer sk-bench', 'openai-beta': 'responses_websockets=2026-02-06' }
    const directMs: number[] = []
    const viaMs: number[] = []
    let bytes: number[] = []
    // A warm-up of each, unmeasured; then rounds in which direct and holdfast take turns.
    await socketSession(direct, auth)
    await socketSession(via, { ...auth, 'x-holdfast-token': served.token })
    for (let r = 0; r < rounds; r++) {
      const d = await socketSession(direct, auth)
      directMs.push(...d.ms)
      const h = await socketSession(via, { ...auth, 'x-holdfast-token': served.token })
      viaMs.push(...h.ms)
      bytes = h.frameBytes
    }
    await served.settled()
    const http = fallbackBytes()
    const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0)
    return {
      turns: TURNS,
      wsBytesTotal: sum(bytes),
      httpBytesTotal: sum(http),
      wsBytesLastTurn: bytes[bytes.length - 1] ?? 0,
      httpBytesLastTurn: http[http.length - 1] ?? 0,
      directP50: pct(directMs, 50),
      holdfastP50: pct(viaMs, 50),
      directP99: pct(directMs, 99),
      holdfastP99: pct(viaMs, 99),
    }
  } finally {
    await served.close()
    await fake.close()
  }
}

/** The case as markdown rows. */
export function websocketRows(f: WebSocketFigures): string {
  const kb = (n: number): string => `${(n / 1024).toFixed(1)} KB`
  const ms = (n: number): string => `${n.toFixed(2)} ms`
  return [
    `| Responses WebSocket, ${f.turns}-turn Codex-shaped session | direct socket | through holdfast | ratio |`,
    '| --- | --- | --- | --- |',
    `| bytes uploaded, whole session: WebSocket frames vs HTTP fallback | ${kb(f.wsBytesTotal)} (WS) | ${kb(f.httpBytesTotal)} (HTTP) | ${(f.httpBytesTotal / f.wsBytesTotal).toFixed(1)}× less on WS |`,
    `| bytes uploaded, last turn | ${kb(f.wsBytesLastTurn)} (WS) | ${kb(f.httpBytesLastTurn)} (HTTP) | ${(f.httpBytesLastTurn / f.wsBytesLastTurn).toFixed(1)}× |`,
    `| time to response.completed per frame, p50 | ${ms(f.directP50)} | ${ms(f.holdfastP50)} | +${ms(f.holdfastP50 - f.directP50)} (${(f.holdfastP50 / f.directP50).toFixed(2)}×) |`,
    `| time to response.completed per frame, p99 | ${ms(f.directP99)} | ${ms(f.holdfastP99)} | ${(f.holdfastP99 / f.directP99).toFixed(2)}× |`,
  ].join('\n')
}

if (require.main === module) {
  void websocketCase().then(
    (f) => process.stdout.write(`${websocketRows(f)}\n`),
    (err: unknown) => {
      process.stderr.write(`${String(err)}\n`)
      process.exit(1)
    },
  )
}
