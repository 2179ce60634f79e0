/**
 * A fake model provider for integration tests and the benchmark: speaks the anthropic (`/v1/messages`),
 * openai (`/v1/chat/completions`) and responses (`/v1/responses`, in fake-responses.ts) dialects over
 * node:http on 127.0.0.1, with scripted failures and function calls.
 * Invariant: every request is pushed to `received` (exact body bytes) before any byte of its answer.
 * Usage is deterministic (~4 bytes a token); cache reads are the prefix shared with an earlier request.
 * A request no queued script takes may be scripted from what it asks, by `answer` (a scripted model).
 * Anthropic answers carry cache `diagnostics`, Responses answers `prompt_cache_diagnostics`, when
 * the request asked (fake-diagnostics.ts).
 */
import * as http from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import * as zlib from 'node:zlib'
import { DiagnosticsStore, ResponsesDiagnosticsStore } from './fake-diagnostics'
import {
  inputItems,
  outputItems,
  responseEvents,
  responseObject,
  responsesCacheKey,
  responsesRendering,
  ResponsesStore,
} from './fake-responses'
import {
  argumentsObject,
  argumentsText,
  canonical,
  pad,
  splitArguments,
  splitText,
  tokensOf,
  type Json,
  type JsonObject,
  type ScriptedToolCall,
} from './fake-wire'

export type { ScriptedToolCall } from './fake-wire'

export interface Received {
  method: string
  url: string
  headers: http.IncomingHttpHeaders
  body: Buffer
  at: number
}

/** How to answer the next matching request(s); every field is optional. */
export interface Script {
  /** Only a request with this path (query excluded) takes the script; default: any request. */
  path?: string
  /** How many matching requests the script answers before it is used up (default 1). */
  times?: number
  /** >= 400: the dialect's real error envelope (unless `body` is given); below: the answer's status. */
  status?: number
  /** The `error.message` of a scripted error. */
  errorMessage?: string
  /** Raw bytes sent as the body, as is (content-type application/json unless `headers` says otherwise). */
  body?: string | Buffer
  /** Extra response headers; they override the fake's own (names are case-insensitive). */
  headers?: Record<string, string | string[]>
  /** Gzip the body (`content-encoding: gzip`); a stream is flushed event by event. */
  gzip?: boolean
  /** Wait this long before the headers (replaces the server's `latencyMs` for this request). */
  delayMs?: number
  /** Wait this long between SSE events. */
  chunkDelayMs?: number
  /** Send about half of the body (or of the SSE events), then destroy the socket. */
  failMidStream?: boolean
  /** Never answer; a client that goes away is counted in `aborted`. */
  hang?: boolean
  /** The reply text; with `toolCalls` and no `text`, the answer is only the calls. */
  text?: string
  /** Function calls the answer makes, in order (anthropic tool_use, openai tool_calls, responses function_call). */
  toolCalls?: ScriptedToolCall[]
  /** Responses only: the answer starts with a reasoning item with this summary text. */
  reasoning?: string
  /** HTTP trailers sent after an event stream (declared in a `trailer` header). */
  trailers?: Record<string, string>
}

/** What `answer` sees of a request that no queued script took. */
export interface Asked {
  path: string
  headers: http.IncomingHttpHeaders
  /** The parsed body (undefined when it is not a JSON object). */
  body: Record<string, unknown> | undefined
}

export interface FakeUpstream {
  /** `http://127.0.0.1:PORT` */
  readonly url: string
  /** Same as `url`: the anthropic SDK's base URL excludes `/v1`. */
  readonly anthropicBaseUrl: string
  /** `url + '/v1'`: the openai SDK's convention. */
  readonly openaiBaseUrl: string
  /** Every request, in arrival order (cleared in place by `reset`). */
  readonly received: Received[]
  /** The next matching request is answered with this script (FIFO); with none queued, the default answer. */
  enqueue(script: Script): void
  /** Requests whose client went away before the response finished (the fake's own cuts excluded). */
  readonly aborted: number
  /** Forgets received requests, queued scripts, the abort count, the prompt cache and stored responses. */
  reset(): void
  /** Closes the server and every socket, hanging requests included. */
  close(): Promise<void>
}

export interface FakeUpstreamOptions {
  /** 0 (default): any free port. */
  port?: number
  /** Delay before the headers of every answer (default 0). */
  latencyMs?: number
  /** Model the prompt cache from request prefixes (default true); false reports no cache tokens. */
  cacheModel?: boolean
  /** Called with each request as it is pushed to `received`, before any byte of its answer. */
  onReceived?: (request: Received) => void
  /** Scripts a request that no queued script takes, from what it asks (a scripted model); undefined: the default answer. */
  answer?: (asked: Asked) => Script | undefined
}

export const DEFAULT_TEXT = 'Hello from the fake upstream.'
const BYTES_PER_TOKEN = 4
/** Renderings kept per (dialect, model), most recently used first. */
const CACHE_ENTRIES = 32

type Dialect = 'anthropic' | 'openai'

interface Exchange {
  req: http.IncomingMessage
  res: http.ServerResponse
  method: string
  path: string
  body: Buffer
  script: Script | undefined
  seq: number
  /** Set before the fake destroys the socket itself, so that the cut is not counted as an abort. */
  cutByUs: boolean
}

interface QueuedScript {
  script: Script
  remaining: number
}

const ANTHROPIC_ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  504: 'timeout_error',
  529: 'overloaded_error',
}

const OPENAI_ERROR_TYPES: Record<number, { type: string; code: string | null }> = {
  400: { type: 'invalid_request_error', code: null },
  401: { type: 'invalid_request_error', code: 'invalid_api_key' },
  403: { type: 'invalid_request_error', code: 'unsupported_country_region_territory' },
  404: { type: 'invalid_request_error', code: 'model_not_found' },
  429: { type: 'requests', code: 'rate_limit_exceeded' },
  500: { type: 'server_error', code: null },
  503: { type: 'server_error', code: null },
}

export function startFakeUpstream(opts: FakeUpstreamOptions = {}): Promise<FakeUpstream> {
  const latencyMs = opts.latencyMs ?? 0
  const cacheModel = opts.cacheModel ?? true
  const received: Received[] = []
  const queue: QueuedScript[] = []
  const cache = new Map<string, Buffer[]>()
  /** Responses created with `store` not false, for `previous_response_id`. */
  const stored = new ResponsesStore()
  /** Anthropic cache-diagnostics fingerprints, by answer id. */
  const diagnostics = new DiagnosticsStore()
  /** OpenAI Responses prompt-cache diagnostics fingerprints, by response id. */
  const responsesDiagnostics = new ResponsesDiagnosticsStore()
  /** The last body seen on each path and its rendering: a repeated 1 MB body is not re-rendered. */
  const lastRendering = new Map<string, { body: Buffer; rendering: Buffer }>()
  const sockets = new Set<Socket>()
  const timers = new Set<NodeJS.Timeout>()
  let aborted = 0
  let seq = 0
  let closing = false

  function sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        timers.delete(timer)
        resolve()
      }, ms)
      timers.add(timer)
    })
  }

  function takeScript(path: string): Script | undefined {
    const i = queue.findIndex((q) => q.script.path === undefined || q.script.path === path)
    const entry = queue[i]
    if (entry === undefined) return undefined
    entry.remaining -= 1
    if (entry.remaining <= 0) queue.splice(i, 1)
    return entry.script
  }

  /** A request's canonical rendering (tools → system → messages); without the cache model, the body. */
  function renderingOf(ex: Exchange, render: () => string): Buffer {
    if (!cacheModel) return ex.body
    const last = lastRendering.get(ex.path)
    if (last !== undefined && last.body.equals(ex.body)) return last.rendering
    const rendering = Buffer.from(render())
    lastRendering.set(ex.path, { body: ex.body, rendering })
    return rendering
  }

  /** Cache tokens of one request: reads = shared prefix with an earlier rendering, ~4 bytes a token. */
  function cacheTokens(key: string, rendering: Buffer): number {
    if (!cacheModel) return 0
    const entries = cache.get(key) ?? []
    let best = 0
    let bestIndex = -1
    for (let i = 0; i < entries.length; i++) {
      const shared = commonPrefix(entries[i]!, rendering)
      if (shared > best) {
        best = shared
        bestIndex = i
      }
      if (shared === rendering.length) break
    }
    const same = bestIndex >= 0 && best === rendering.length && entries[bestIndex]!.length === best
    if (same) entries.unshift(...entries.splice(bestIndex, 1))
    else entries.unshift(rendering)
    if (entries.length > CACHE_ENTRIES) entries.length = CACHE_ENTRIES
    cache.set(key, entries)
    return Math.floor(best / BYTES_PER_TOKEN)
  }

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const ex: Exchange = {
      req,
      res,
      method: req.method ?? 'GET',
      path: new URL(req.url ?? '/', 'http://127.0.0.1').pathname,
      body: Buffer.alloc(0),
      script: undefined,
      seq: ++seq,
      cutByUs: false,
    }
    res.on('close', () => {
      if (!res.writableFinished && !ex.cutByUs && !closing) aborted += 1
    })
    res.on('error', () => undefined)
    const body = await readBody(req)
    if (body === null) return
    ex.body = body
    const entry = { method: ex.method, url: req.url ?? '/', headers: req.headers, body, at: Date.now() }
    received.push(entry)
    opts.onReceived?.(entry)
    // An upgrade (a WebSocket try) is not a scripted turn: this upstream speaks HTTP only and refuses it.
    if (req.headers.upgrade !== undefined)
      return sendError(ex, dialectOf(ex), 404, notFoundMessage(ex, dialectOf(ex)))
    ex.script =
      takeScript(ex.path) ?? opts.answer?.({ path: ex.path, headers: req.headers, body: parseObject(body) })
    if (ex.script?.hang) return
    const delay = ex.script?.delayMs ?? latencyMs
    if (delay > 0) await sleep(delay)
    if (res.destroyed) return

    const script = ex.script
    const dialect = dialectOf(ex)
    if (script?.status !== undefined && script.status >= 400) {
      if (script.body !== undefined) return sendBody(ex, script.status, baseHeaders(ex, dialect), script.body)
      return sendError(ex, dialect, script.status, script.errorMessage)
    }
    if (script?.body !== undefined)
      return sendBody(ex, script.status ?? 200, baseHeaders(ex, dialect), script.body)
    return route(ex, dialect)
  }

  async function route(ex: Exchange, dialect: Dialect): Promise<void> {
    const { method, path } = ex
    if ((method === 'HEAD' || method === 'GET') && path === '/api/hello') return sendBody(ex, 200, {}, '')
    if (method === 'GET' && path === '/v1/models') return sendJson(ex, dialect, modelList(dialect))
    if (method !== 'POST') return sendError(ex, dialect, 404, notFoundMessage(ex, dialect))
    const known = ['/v1/messages', '/v1/messages/count_tokens', '/v1/chat/completions', '/v1/responses']
    if (!known.includes(path)) return sendError(ex, dialect, 404, notFoundMessage(ex, dialect))

    let parsed: unknown
    try {
      parsed = JSON.parse(ex.body.toString('utf8'))
    } catch (err) {
      const message =
        dialect === 'anthropic'
          ? `The request body is not valid JSON: ${(err as Error).message}`
          : "We could not parse the JSON body of your request. (HINT: This likely means you aren't " +
            'using your HTTP library correctly.)'
      return sendError(ex, dialect, 400, message)
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      return sendError(ex, dialect, 400, 'The request body must be a JSON object.')
    }
    const request = parsed as JsonObject

    if (path === '/v1/messages/count_tokens') {
      return sendJson(ex, dialect, { input_tokens: Math.ceil(ex.body.length / BYTES_PER_TOKEN) })
    }
    if (path === '/v1/messages') return anthropicMessages(ex, request)
    if (path === '/v1/chat/completions') return openaiChat(ex, request)
    return openaiResponses(ex, request)
  }

  async function anthropicMessages(ex: Exchange, request: JsonObject): Promise<void> {
    const model = typeof request.model === 'string' ? request.model : 'claude-fake-1'
    const toolCalls = ex.script?.toolCalls ?? []
    const text = ex.script?.text ?? (toolCalls.length > 0 ? undefined : DEFAULT_TEXT)
    const toolUses = toolCalls.map((call, i) => ({
      type: 'tool_use',
      id: `toolu_fake${pad(ex.seq)}_${i}`,
      name: call.name,
      input: argumentsObject(call),
    }))
    const rendering = renderingOf(
      ex,
      () =>
        canonical(request.tools ?? []) +
        canonical(asBlocks(request.system ?? [])) +
        canonical(Array.isArray(request.messages) ? request.messages.map(normalizeMessage) : []),
    )
    const total = Math.ceil(rendering.length / BYTES_PER_TOKEN)
    const read = Math.min(total, cacheTokens(`anthropic\0${model}`, rendering))
    const creation = cacheModel && hasCacheControl(request) ? total - read : 0
    const outputTokens =
      tokensOf(text ?? '') + toolCalls.reduce((n, c) => n + tokensOf(c.name + argumentsText(c)), 0)
    const stopReason = toolCalls.length > 0 ? 'tool_use' : 'end_turn'
    const usage = {
      input_tokens: total - read - creation,
      cache_creation_input_tokens: creation,
      cache_read_input_tokens: read,
      cache_creation: { ephemeral_5m_input_tokens: creation, ephemeral_1h_input_tokens: 0 },
      output_tokens: outputTokens,
      service_tier: 'standard',
    }
    const id = `msg_fake${pad(ex.seq)}`
    const said = diagnostics.answer(request, model, id)
    const message = {
      id,
      type: 'message',
      role: 'assistant',
      model,
      content: [...(text === undefined ? [] : [{ type: 'text', text }]), ...toolUses],
      stop_reason: stopReason,
      stop_sequence: null,
      usage,
      ...(said === undefined ? {} : { diagnostics: said }),
    }
    if (request.stream !== true) return sendJson(ex, 'anthropic', message)

    const event = (name: string, data: unknown): string => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`
    const block = (index: number, start: object, deltas: object[]): string[] => [
      event('content_block_start', { type: 'content_block_start', index, content_block: start }),
      ...deltas.map((delta) => event('content_block_delta', { type: 'content_block_delta', index, delta })),
      event('content_block_stop', { type: 'content_block_stop', index }),
    ]
    const blocks = [
      ...(text === undefined
        ? []
        : [
            block(
              0,
              { type: 'text', text: '' },
              splitText(text).map((piece) => ({ type: 'text_delta', text: piece })),
            ),
          ]),
      ...toolUses.map((use, i) =>
        block(
          i + (text === undefined ? 0 : 1),
          { ...use, input: {} },
          splitArguments(JSON.stringify(use.input)).map((piece) => ({
            type: 'input_json_delta',
            partial_json: piece,
          })),
        ),
      ),
    ]
    // A keep-alive comment after the first delta, as long answers carry them.
    blocks[0]?.splice(2, 0, ': keep-alive\n\n')
    const events = [
      event('message_start', {
        type: 'message_start',
        message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } },
      }),
      'event: ping\ndata: {"type": "ping"}\n\n',
      ...blocks.flat(),
      event('message_delta', {
        type: 'message_delta',
        delta: { stop_reason: stopReason, stop_sequence: null },
        usage: { output_tokens: outputTokens },
      }),
      event('message_stop', { type: 'message_stop' }),
    ]
    return sendEvents(ex, 'anthropic', events)
  }

  async function openaiChat(ex: Exchange, request: JsonObject): Promise<void> {
    const model = typeof request.model === 'string' ? request.model : 'gpt-fake-1'
    const scripted = ex.script?.toolCalls ?? []
    const text = ex.script?.text ?? (scripted.length > 0 ? null : DEFAULT_TEXT)
    const toolCalls = scripted.map((call, i) => ({
      id: `call_fake${pad(ex.seq)}_${i}`,
      type: 'function',
      function: { name: call.name, arguments: argumentsText(call) },
    }))
    const finish = toolCalls.length > 0 ? 'tool_calls' : 'stop'
    const rendering = renderingOf(
      ex,
      () => canonical(request.tools ?? []) + canonical(request.messages ?? []),
    )
    const promptTokens = Math.ceil(rendering.length / BYTES_PER_TOKEN)
    const cached = Math.min(promptTokens, cacheTokens(`openai\0${model}`, rendering))
    const completionTokens =
      tokensOf(text ?? '') +
      toolCalls.reduce((n, c) => n + tokensOf(c.function.name + c.function.arguments), 0)
    const usage = {
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      total_tokens: promptTokens + completionTokens,
      prompt_tokens_details: { cached_tokens: cached, audio_tokens: 0 },
      completion_tokens_details: {
        reasoning_tokens: 0,
        audio_tokens: 0,
        accepted_prediction_tokens: 0,
        rejected_prediction_tokens: 0,
      },
    }
    const id = `chatcmpl-fake${pad(ex.seq)}`
    const created = Math.floor(Date.now() / 1000)
    if (request.stream !== true) {
      return sendJson(ex, 'openai', {
        id,
        object: 'chat.completion',
        created,
        model,
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: text,
              refusal: null,
              annotations: [],
              ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
            },
            logprobs: null,
            finish_reason: finish,
          },
        ],
        usage,
        service_tier: 'default',
        system_fingerprint: 'fp_fake',
      })
    }

    const options = request.stream_options
    const includeUsage =
      options !== null &&
      typeof options === 'object' &&
      !Array.isArray(options) &&
      options.include_usage === true
    const chunk = (choices: unknown[], extra: object = {}): string =>
      `data: ${JSON.stringify({
        id,
        object: 'chat.completion.chunk',
        created,
        model,
        service_tier: 'default',
        system_fingerprint: 'fp_fake',
        choices,
        ...(includeUsage ? { usage: null } : {}),
        ...extra,
      })}\n\n`
    const choice = (delta: object, finish: string | null): object => ({
      index: 0,
      delta,
      logprobs: null,
      finish_reason: finish,
    })
    const pieces = [
      ...(text === null ? [] : splitText(text).map((piece) => chunk([choice({ content: piece }, null)]))),
      ...toolCalls.flatMap((call, index) => [
        chunk([
          choice(
            {
              tool_calls: [
                { index, id: call.id, type: 'function', function: { ...call.function, arguments: '' } },
              ],
            },
            null,
          ),
        ]),
        ...splitArguments(call.function.arguments).map((piece) =>
          chunk([choice({ tool_calls: [{ index, function: { arguments: piece } }] }, null)]),
        ),
      ]),
    ]
    const events = [
      chunk([choice({ role: 'assistant', content: text === null ? null : '', refusal: null }, null)]),
      ...pieces.slice(0, 1),
      ': keep-alive\n\n',
      ...pieces.slice(1),
      chunk([choice({}, finish)]),
      ...(includeUsage ? [chunk([], { usage })] : []),
      'data: [DONE]\n\n',
    ]
    return sendEvents(ex, 'openai', events)
  }

  async function openaiResponses(ex: Exchange, request: JsonObject): Promise<void> {
    const model = typeof request.model === 'string' ? request.model : 'gpt-fake-1'
    const previousId = request.previous_response_id
    const previous = typeof previousId === 'string' ? stored.get(previousId) : []
    if (previous === undefined) {
      return sendError(ex, 'openai', 400, `Previous response with id '${String(previousId)}' not found.`, {
        param: 'previous_response_id',
        code: 'previous_response_not_found',
      })
    }
    const context = [...previous, ...inputItems(request.input)]
    const rendering = renderingOf(ex, () => responsesRendering(request, context))
    const inputTokens = tokensOf(rendering)
    const toolCalls = ex.script?.toolCalls ?? []
    const answer = {
      request,
      model,
      seq: ex.seq,
      text: ex.script?.text ?? (toolCalls.length > 0 ? undefined : DEFAULT_TEXT),
      reasoning: ex.script?.reasoning,
      toolCalls,
      inputTokens,
      cachedTokens: Math.min(inputTokens, cacheTokens(responsesCacheKey(model, request), rendering)),
    }
    const output = outputItems(answer)
    const said = responsesDiagnostics.answer(request, model, `resp_fake${pad(ex.seq)}`, context)
    const response: JsonObject = {
      ...responseObject(answer, output),
      ...(said === undefined ? {} : { prompt_cache_diagnostics: said }),
    }
    if (request.store !== false) stored.put(response.id as string, [...context, ...inputItems(output)])
    if (request.stream !== true) return sendJson(ex, 'openai', response)
    return sendEvents(ex, 'openai', responseEvents(response))
  }

  function baseHeaders(ex: Exchange, dialect: Dialect): http.OutgoingHttpHeaders {
    const requestId = `req_fake${pad(ex.seq)}`
    if (dialect === 'anthropic') {
      return {
        'content-type': 'application/json',
        'request-id': requestId,
        'anthropic-organization-id': '00000000-0000-4000-8000-000000000000',
        'anthropic-ratelimit-requests-limit': '4000',
        'anthropic-ratelimit-requests-remaining': '3999',
        'anthropic-ratelimit-requests-reset': new Date(Date.now() + 60_000).toISOString(),
      }
    }
    return {
      'content-type': 'application/json',
      'x-request-id': requestId,
      'openai-version': '2020-10-01',
      'openai-processing-ms': '1',
      'x-ratelimit-limit-requests': '10000',
      'x-ratelimit-remaining-requests': '9999',
    }
  }

  function withScriptHeaders(ex: Exchange, headers: http.OutgoingHttpHeaders): http.OutgoingHttpHeaders {
    for (const [name, value] of Object.entries(ex.script?.headers ?? {})) headers[name.toLowerCase()] = value
    return headers
  }

  function sendJson(ex: Exchange, dialect: Dialect, value: unknown): Promise<void> {
    return sendBody(ex, ex.script?.status ?? 200, baseHeaders(ex, dialect), JSON.stringify(value))
  }

  function sendError(
    ex: Exchange,
    dialect: Dialect,
    status: number,
    message?: string,
    openaiFields: { param?: string; code?: string } = {},
  ): Promise<void> {
    const headers = baseHeaders(ex, dialect)
    const text = message ?? `scripted ${status} from the fake upstream`
    if (dialect === 'anthropic') {
      const type = ANTHROPIC_ERROR_TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error')
      const body = { type: 'error', error: { type, message: text }, request_id: headers['request-id'] }
      return sendBody(ex, status, headers, JSON.stringify(body))
    }
    const kind = OPENAI_ERROR_TYPES[status] ?? {
      type: status >= 500 ? 'server_error' : 'invalid_request_error',
      code: null,
    }
    const body = {
      error: {
        message: text,
        type: kind.type,
        param: openaiFields.param ?? null,
        code: openaiFields.code ?? kind.code,
      },
    }
    return sendBody(ex, status, headers, JSON.stringify(body))
  }

  async function sendBody(
    ex: Exchange,
    status: number,
    headers: http.OutgoingHttpHeaders,
    body: string | Buffer,
  ): Promise<void> {
    const { res, script } = ex
    let payload = typeof body === 'string' ? Buffer.from(body) : body
    if (script?.gzip) {
      payload = zlib.gzipSync(payload)
      headers['content-encoding'] = 'gzip'
    }
    headers['content-length'] = String(payload.length)
    res.writeHead(status, withScriptHeaders(ex, headers))
    if (ex.method === 'HEAD') {
      res.end()
      return
    }
    if (script?.failMidStream) {
      await writeChunk(res, payload.subarray(0, Math.floor(payload.length / 2)))
      cut(ex)
      return
    }
    res.end(payload)
  }

  async function sendEvents(ex: Exchange, dialect: Dialect, events: string[]): Promise<void> {
    const { res, script } = ex
    const headers = baseHeaders(ex, dialect)
    headers['content-type'] = 'text/event-stream; charset=utf-8'
    headers['cache-control'] = 'no-cache'
    let write = (chunk: string): Promise<void> => writeChunk(res, chunk)
    let end = (): void => void res.end()
    if (script?.gzip) {
      headers['content-encoding'] = 'gzip'
      const gzip = zlib.createGzip()
      gzip.pipe(res)
      write = (chunk) =>
        new Promise((resolve) => {
          gzip.write(chunk)
          gzip.flush(zlib.constants.Z_SYNC_FLUSH, () => setImmediate(resolve))
        })
      end = () => void gzip.end()
    }
    if (script?.trailers) headers.trailer = Object.keys(script.trailers).join(', ')
    res.writeHead(ex.script?.status ?? 200, withScriptHeaders(ex, headers))
    res.flushHeaders()
    const count = script?.failMidStream ? Math.ceil(events.length / 2) : events.length
    for (let i = 0; i < count; i++) {
      if (i > 0 && script?.chunkDelayMs) await sleep(script.chunkDelayMs)
      if (res.destroyed) return
      await write(events[i]!)
    }
    if (res.destroyed) return
    if (script?.trailers) res.addTrailers(script.trailers)
    if (script?.failMidStream) cut(ex)
    else end()
  }

  function cut(ex: Exchange): void {
    ex.cutByUs = true
    ex.res.destroy()
  }

  const server = http.createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (res.headersSent) {
        res.destroy()
        return
      }
      res.writeHead(500, { 'content-type': 'text/plain' })
      res.end(`fake upstream failed: ${String(err)}`)
    })
  })
  server.on('connection', (socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })

  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(opts.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject)
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      resolve({
        url,
        anthropicBaseUrl: url,
        openaiBaseUrl: `${url}/v1`,
        received,
        enqueue(script: Script): void {
          queue.push({ script, remaining: script.times ?? 1 })
        },
        get aborted(): number {
          return aborted
        },
        reset(): void {
          received.length = 0
          queue.length = 0
          cache.clear()
          stored.clear()
          diagnostics.clear()
          responsesDiagnostics.clear()
          lastRendering.clear()
          aborted = 0
        },
        close(): Promise<void> {
          closing = true
          for (const timer of timers) clearTimeout(timer)
          timers.clear()
          return new Promise((done) => {
            server.close(() => done())
            for (const socket of sockets) socket.destroy()
            server.closeAllConnections()
          })
        },
      })
    })
  })
}

/** The request body, or null when the client went away before sending all of it. */
function readBody(req: http.IncomingMessage): Promise<Buffer | null> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => resolve(Buffer.concat(chunks)))
    req.on('error', () => resolve(null))
    req.on('close', () => {
      if (!req.complete) resolve(null)
    })
  })
}

/** The body as a JSON object, or undefined. */
function parseObject(body: Buffer): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(body.toString('utf8'))
    return v !== null && typeof v === 'object' && !Array.isArray(v)
      ? (v as Record<string, unknown>)
      : undefined
  } catch {
    return undefined // not JSON: the route answers it with the dialect's error
  }
}

/** Resolves once the chunk is handed to the socket, or once the response is gone. */
function writeChunk(res: http.ServerResponse, chunk: string | Buffer): Promise<void> {
  return new Promise((resolve) => {
    if (res.destroyed) return resolve()
    const done = (): void => {
      res.off('close', done)
      resolve()
    }
    res.once('close', done)
    res.write(chunk, done)
  })
}

function dialectOf(ex: Exchange): Dialect {
  if (ex.path === '/v1/messages' || ex.path.startsWith('/v1/messages/')) return 'anthropic'
  if (ex.path === '/v1/chat/completions' || ex.path === '/v1/responses') return 'openai'
  return ex.req.headers['anthropic-version'] !== undefined ? 'anthropic' : 'openai'
}

function notFoundMessage(ex: Exchange, dialect: Dialect): string {
  return dialect === 'anthropic' ? 'Not Found' : `Invalid URL (${ex.method} ${ex.path})`
}

function modelList(dialect: Dialect): object {
  if (dialect === 'anthropic') {
    const ids = ['claude-fake-1', 'claude-fake-2']
    return {
      data: ids.map((id, i) => ({
        type: 'model',
        id,
        display_name: `Claude Fake ${i + 1}`,
        created_at: '2025-01-01T00:00:00Z',
      })),
      has_more: false,
      first_id: ids[0],
      last_id: ids[ids.length - 1],
    }
  }
  return {
    object: 'list',
    data: ['gpt-fake-1', 'gpt-fake-2'].map((id) => ({
      id,
      object: 'model',
      created: 1735689600,
      owned_by: 'holdfast-fake',
    })),
  }
}

function hasCacheControl(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(hasCacheControl)
  if (value === null || typeof value !== 'object') return false
  const object = value as Record<string, unknown>
  if (object.cache_control !== undefined && object.cache_control !== null) return true
  return Object.values(object).some(hasCacheControl)
}

/** A string content counts as one text block, as the provider renders it. */
function asBlocks(content: Json): Json {
  return typeof content === 'string' ? [{ type: 'text', text: content }] : content
}

function normalizeMessage(message: Json): Json {
  if (message === null || typeof message !== 'object' || Array.isArray(message)) return message
  return message.content === undefined ? message : { ...message, content: asBlocks(message.content) }
}

/** Length of the common prefix of two buffers: native compares of 64 KiB, then 4 KiB, 256 and 16 bytes. */
function commonPrefix(a: Buffer, b: Buffer): number {
  const n = Math.min(a.length, b.length)
  let i = 0
  for (let step = 65536; step >= 16; step >>= 4) {
    while (i + step <= n && a.subarray(i, i + step).equals(b.subarray(i, i + step))) i += step
  }
  while (i < n && a[i] === b[i]) i++
  return i
}
