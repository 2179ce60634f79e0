/**
 * stages/forward-handler: each event of a provider call sets the one outcome it means and answers
 * the client as that outcome needs — called directly on a fake upstream response (status, headers,
 * pieces) and a fake client response that records what it was given, no socket. The journal side
 * is a real tee into a temporary journal, so "before the client" is checked against the file: each
 * client write looks at what the journal holds at that moment.
 */
import { EventEmitter } from 'node:events'
import fs from 'node:fs'
import type { ServerResponse } from 'node:http'
import os from 'node:os'
import path from 'node:path'
import type { StepMeta } from '../../../generated/meta'
import { HoldfastError } from '../../../proxy/core/errors'
import { anthropic } from '../../../proxy/dialects'
import { readJournal } from '../../../proxy/record/journal/reader'
import { JournalTee } from '../../../proxy/record/journal/tee'
import { Journal } from '../../../proxy/record/journal/writer'
import { ForwardHandler } from '../../../proxy/stages/forward-handler'

/** A client response that records what reached it, and what the journal held at each write. */
class Client extends EventEmitter {
  status: number | undefined
  headers: Record<string, unknown> = {}
  flushed = false
  body: Buffer[] = []
  trailers: Record<string, string> | undefined
  ended = false
  destroyed = false
  headersSent = false
  writableFinished = false
  /** What the journal held of the answer (bytes, and whether HEAD) when each piece or the end came. */
  seen: { answer: number; head: boolean }[] = []
  constructor(private readonly journalDir?: string) {
    super()
  }
  private look(): void {
    if (!this.journalDir) return
    const s = readJournal(this.journalDir).steps.get(1)
    this.seen.push({ answer: s?.answer.length ?? 0, head: s?.head !== undefined })
  }
  writeHead(status: number, headers: Record<string, unknown> = {}): this {
    this.status = status
    this.headers = headers
    return this
  }
  flushHeaders(): void {
    this.flushed = true
    this.headersSent = true
  }
  write(chunk: Buffer): boolean {
    this.look()
    this.headersSent = true
    this.body.push(chunk)
    return true
  }
  addTrailers(t: Record<string, string>): void {
    this.trailers = t
  }
  end(chunk?: Buffer): this {
    this.look()
    if (chunk) this.body.push(Buffer.from(chunk))
    this.headersSent = true
    this.ended = true
    this.writableFinished = true
    return this
  }
  destroy(): this {
    this.destroyed = true
    return this
  }
  get text(): string {
    return Buffer.concat(this.body).toString()
  }
}

const ROUTE = { provider: 'anthropic', url: new URL('http://127.0.0.1:9/v1/messages') }
const SSE = { 'content-type': 'text/event-stream' }
const meta = { step: '001' } as unknown as StepMeta

let dir: string
let journal: Journal
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'holdfast-fwd-'))
  journal = new Journal(false)
})
afterEach(() => {
  jest.restoreAllMocks()
  journal.close()
  fs.rmSync(dir, { recursive: true, force: true })
})

/** A handler for a recorded step 001 whose journal is `dir`, and its client. */
function recorded(faults: Error[] = []): { h: ForwardHandler; client: Client } {
  const client = new Client(dir)
  const tee = new JournalTee(journal.agent(dir).send(1, meta, Buffer.from('{}')), (e) => faults.push(e))
  const h = new ForwardHandler(client as unknown as ServerResponse, anthropic, ROUTE, tee, '001')
  return { h, client }
}
const envelope = (c: Client): unknown => JSON.parse(c.text)
const enospc = (): never => {
  throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' })
}

describe('onSend', () => {
  it('writes SENT before the request goes', () => {
    const { h } = recorded()
    expect(h.onSend()).toBe(true)
    expect(readJournal(dir).steps.get(1)?.sent).toBe(true)
  })

  it('refuses the step when SENT cannot be written: RECORD_WRITE_FAILED in the envelope, not_sent', () => {
    const { h, client } = recorded()
    jest.spyOn(fs, 'writevSync').mockImplementation(enospc)
    expect(h.onSend()).toBe(false)
    expect(client.status).toBe(500)
    expect(client.headers['x-holdfast-error']).toBe('RECORD_WRITE_FAILED')
    expect(envelope(client)).toEqual({
      type: 'error',
      error: { type: 'api_error', message: 'the record of step 001 could not be written; nothing was sent' },
    })
    expect(h.done()).toMatchObject({
      outcome: 'not_sent',
      status: null,
      error: { code: 'RECORD_WRITE_FAILED', message: expect.stringContaining('ENOSPC') },
    })
  })
})

describe('onHeaders', () => {
  it('passes the status and headers on, flushing an event stream at once: ok below 400', () => {
    const { h, client } = recorded()
    h.onSend()
    h.onHeaders({ statusCode: 200, headers: { ...SSE, connection: 'keep-alive', 'request-id': 'r1' } })
    expect([client.status, client.flushed]).toEqual([200, true])
    expect(client.headers).toEqual({ ...SSE, 'request-id': 'r1' }) // hop-by-hop dropped
    expect(h.result).toMatchObject({ outcome: 'ok', status: 200 })
  })

  it("holds a JSON answer's headers for its first bytes, and records a 4xx as upstream_error", () => {
    const { h, client } = recorded()
    h.onHeaders({ statusCode: 429, headers: { 'content-type': 'application/json', 'retry-after': '7' } })
    expect([client.status, client.flushed]).toEqual([429, false])
    expect(h.result).toMatchObject({ outcome: 'upstream_error', status: 429 })
  })
})

describe('onChunk and onComplete', () => {
  it('put each piece into the journal before the client has it, and HEAD before the end', () => {
    const { h, client } = recorded()
    h.onSend()
    h.onHeaders({ statusCode: 200, headers: SSE })
    expect(h.onChunk(Buffer.from('event: a\n\n'))).toBe(true)
    h.onChunk(Buffer.from('event: b\n\n'))
    h.onComplete({})
    expect(client.seen).toEqual([
      { answer: 10, head: false },
      { answer: 20, head: false },
      { answer: 20, head: true },
    ])
    expect([client.text, client.ended, client.trailers]).toEqual([
      'event: a\n\nevent: b\n\n',
      true,
      undefined,
    ])
    const f = h.done()
    // A whole answer in the journal is read there: the forward keeps no copy.
    expect(f).toMatchObject({ outcome: 'ok', streamed: true, body: Buffer.alloc(0), error: null })
    expect(f.ttfbMs).toEqual(expect.any(Number))
    expect(readJournal(dir).steps.get(1)?.head).toMatchObject({ status: 200, bytes: 20 })
  })

  it('write HEAD with the last declared byte, before the client has that byte', () => {
    const { h, client } = recorded()
    h.onSend()
    h.onHeaders({ statusCode: 200, headers: { 'content-type': 'application/json', 'content-length': '7' } })
    h.onChunk(Buffer.from('{"a":'))
    h.onChunk(Buffer.from('1}'))
    expect(client.seen).toEqual([
      { answer: 5, head: false },
      { answer: 7, head: true },
    ])
    h.onComplete()
    expect(h.done().streamed).toBe(true)
  })

  it('pass trailers on after the body, and HEAD records them', () => {
    const { h, client } = recorded()
    h.onSend()
    h.onHeaders({ statusCode: 200, headers: { ...SSE, trailer: 'x-done' } })
    h.onChunk(Buffer.from('event: a\n\n'))
    h.onComplete({ 'x-done': 'yes' })
    expect(client.trailers).toEqual({ 'x-done': 'yes' })
    expect(readJournal(dir).steps.get(1)?.head?.trailers).toEqual({ 'x-done': 'yes' })
  })

  it('give the client the whole answer when the journal refuses a piece, and keep its bytes for the commit', () => {
    const faults: Error[] = []
    const { h, client } = recorded(faults)
    h.onSend()
    h.onHeaders({ statusCode: 200, headers: SSE })
    h.onChunk(Buffer.from('event: a\n\n'))
    jest.spyOn(fs, 'writevSync').mockImplementation(enospc)
    h.onChunk(Buffer.from('event: b\n\n'))
    h.onComplete()
    jest.restoreAllMocks()
    expect([client.text, client.ended, client.destroyed]).toEqual(['event: a\n\nevent: b\n\n', true, false])
    expect(faults).toHaveLength(1)
    const f = h.done()
    expect(f).toMatchObject({ outcome: 'ok', streamed: false })
    expect(f.body.toString()).toBe('event: a\n\nevent: b\n\n')
  })

  it("keep the answer as the forward's value when the call is not recorded (no tee)", () => {
    const client = new Client()
    const h = new ForwardHandler(client as unknown as ServerResponse, anthropic, ROUTE, undefined)
    expect(h.onSend()).toBe(true)
    h.onHeaders({ statusCode: 200, headers: { 'content-type': 'application/json' } })
    h.onChunk(Buffer.from('{"input_tokens":3}'))
    h.onComplete()
    expect(h.done()).toMatchObject({
      outcome: 'ok',
      streamed: false,
      body: Buffer.from('{"input_tokens":3}'),
    })
  })
})

describe('onError', () => {
  it('before the headers: a 502 UPSTREAM_UNREACHABLE naming the row, in the envelope, unreachable', () => {
    const { h, client } = recorded()
    h.onSend()
    h.onError(new Error('connect ECONNREFUSED 127.0.0.1:9'))
    expect([client.status, client.headers['x-holdfast-error']]).toEqual([502, 'UPSTREAM_UNREACHABLE'])
    expect(h.done()).toMatchObject({
      outcome: 'unreachable',
      status: null,
      error: {
        code: 'UPSTREAM_UNREACHABLE',
        message:
          'provider row "anthropic" at http://127.0.0.1:9 could not be reached: connect ECONNREFUSED 127.0.0.1:9',
      },
    })
  })

  it('keeps a HoldfastError the send raised as it is', () => {
    const { h, client } = recorded()
    h.onError(new HoldfastError('PROVIDER_KEY_MISSING', 'no key'))
    expect([client.status, h.result.error]).toEqual([
      500,
      { code: 'PROVIDER_KEY_MISSING', message: 'no key' },
    ])
  })

  it('after the headers: the client cut (never a clean end), UPSTREAM_FAILED, the bytes so far kept', () => {
    const { h, client } = recorded()
    h.onSend()
    h.onHeaders({ statusCode: 200, headers: SSE })
    h.onChunk(Buffer.from('event: a\n\n'))
    h.onError(new Error('other side closed'))
    expect([client.destroyed, client.ended]).toEqual([true, false])
    const f = h.done()
    expect(f).toMatchObject({
      outcome: 'upstream_error',
      status: 200,
      streamed: false,
      error: {
        code: 'UPSTREAM_FAILED',
        message: "the provider's answer failed mid-stream: other side closed",
      },
    })
    expect(f.body.toString()).toBe('event: a\n\n')
  })
})

describe('onClientGone', () => {
  it.each([
    ['before the send', 0, 'the client went away before the request was sent'],
    ['before the answer', 1, 'the client went away before the provider answered'],
    ['mid-answer', 2, 'the client went away mid-answer; the provider call was aborted'],
  ])('records aborted with CLIENT_GONE %s, and answers no one', (_, phase, message) => {
    const { h, client } = recorded()
    if (phase >= 1) h.onSend()
    if (phase >= 2) h.onHeaders({ statusCode: 200, headers: SSE })
    h.onClientGone()
    expect(h.done()).toMatchObject({ outcome: 'aborted', error: { code: 'CLIENT_GONE', message } })
    expect([client.destroyed, client.text]).toEqual([false, ''])
  })
})

describe('onShutdown', () => {
  it('answers 503 SHUTTING_DOWN while nothing went to the client: not_sent before the send', () => {
    const { h, client } = recorded()
    h.onShutdown(false)
    expect([client.status, client.headers['x-holdfast-error']]).toEqual([503, 'SHUTTING_DOWN'])
    expect(h.done()).toMatchObject({
      outcome: 'not_sent',
      error: { code: 'SHUTDOWN_TIMEOUT', message: 'holdfast was shutting down; the step was not sent' },
    })
  })

  it('interrupted once sent, 503 while the provider had not answered, the client cut mid-answer', () => {
    const waiting = recorded()
    waiting.h.onSend()
    waiting.h.onShutdown(true)
    expect(waiting.client.status).toBe(503)
    expect(waiting.h.done()).toMatchObject({ outcome: 'interrupted', error: { code: 'SHUTDOWN_TIMEOUT' } })
    const streaming = recorded()
    streaming.h.onSend()
    streaming.h.onHeaders({ statusCode: 200, headers: SSE })
    streaming.h.onChunk(Buffer.from('event: a\n\n'))
    streaming.h.onShutdown(true)
    expect([streaming.client.destroyed, streaming.client.ended]).toEqual([true, false])
    expect(streaming.h.done()).toMatchObject({ outcome: 'interrupted', status: 200 })
  })
})
