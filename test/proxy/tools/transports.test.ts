/**
 * proxy/tools/transports: how a tool host's failures read (`describe`, `classify`) and the
 * transports `openTransport` makes. Rules: a fetch error's cause is added once; a timeout is a
 * timeout even while connecting, anything else while connecting is unreachable, a JSON-RPC error
 * is refused and a closed connection is gone; a stdio child runs in the configured cwd with
 * holdfast's environment plus the configured env, minus HOLDFAST_TOKEN and git's locating
 * variables, its stderr logged line by line; an HTTP transport sends the configured headers and
 * reports a POST answer stream cut short to `onCut`.
 */
import fs from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js'
import pino from 'pino'
import {
  classify,
  describe as describeErr,
  HostFailure,
  openTransport,
} from '../../../proxy/tools/transports'
import { eventually } from '../../support/harness'
import { capturingLogger, tempDir } from './support'

const dirs: string[] = []
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })))

describe('describe', () => {
  it("adds a fetch error's cause once, and reads anything thrown as one line", () => {
    const fetchErr = new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED 127.0.0.1:9') })
    expect(describeErr(fetchErr)).toBe('fetch failed (connect ECONNREFUSED 127.0.0.1:9)')
    const already = new Error('boom: inner', { cause: new Error('inner') })
    expect(describeErr(already)).toBe('boom: inner')
    expect(describeErr(new Error('plain'))).toBe('plain')
    expect(describeErr('a string')).toBe('a string')
    expect(describeErr(undefined)).toBe('undefined')
  })
})

describe('classify', () => {
  const timeout = new McpError(ErrorCode.RequestTimeout, 'Request timed out')
  const closed = new McpError(ErrorCode.ConnectionClosed, 'Connection closed')
  const rpc = new McpError(ErrorCode.InvalidParams, 'Tool x not found')

  it('passes a HostFailure through as it is', () => {
    const f = new HostFailure('refused', 'already decided')
    expect(classify(f, true)).toBe(f)
    expect(classify(f, false)).toBe(f)
  })

  it('reads a request timeout as timeout, while connecting or not', () => {
    expect([classify(timeout, true).kind, classify(timeout, false).kind]).toEqual(['timeout', 'timeout'])
  })

  it('reads every other failure while connecting as unreachable', () => {
    expect([rpc, closed, new Error('spawn x ENOENT')].map((e) => classify(e, true).kind)).toEqual([
      'unreachable',
      'unreachable',
      'unreachable',
    ])
  })

  it('reads a JSON-RPC error as refused, and a closed connection or anything else as gone', () => {
    const r = classify(rpc, false)
    expect([r.kind, r.message, r.name]).toEqual(['refused', describeErr(rpc), 'HostFailure'])
    expect([classify(closed, false).kind, classify(new Error('socket hang up'), false).kind]).toEqual([
      'gone',
      'gone',
    ])
  })
})

describe('openTransport', () => {
  it('runs a stdio child in its cwd with the merged env, no token, no GIT_DIR, stderr logged line by line', async () => {
    const cwd = fs.realpathSync(tempDir())
    dirs.push(cwd)
    const { log, lines } = capturingLogger()
    const script = [
      'const e = process.env',
      'console.error("cwd=" + process.cwd())',
      'console.error("configured=" + e.HOLDFAST_T_CONFIGURED + " inherited=" + e.HOLDFAST_T_INHERITED)',
      'console.error("token=" + e.HOLDFAST_TOKEN + " git_dir=" + e.GIT_DIR)',
    ].join(';')
    const saved = { ...process.env }
    Object.assign(process.env, {
      HOLDFAST_T_INHERITED: 'in',
      HOLDFAST_TOKEN: 'secret',
      GIT_DIR: '/somewhere/.git',
    })
    let t: ReturnType<typeof openTransport>
    try {
      t = openTransport(
        'kid',
        {
          mcp: { command: process.execPath, args: ['-e', script], env: { HOLDFAST_T_CONFIGURED: 'cf' }, cwd },
        },
        log,
        () => undefined,
      )
    } finally {
      for (const k of ['HOLDFAST_T_INHERITED', 'HOLDFAST_TOKEN', 'GIT_DIR']) {
        if (saved[k] === undefined) delete process.env[k]
        else process.env[k] = saved[k]
      }
    }
    expect(t).toBeInstanceOf(StdioClientTransport)
    const exited = new Promise<void>((r) => (t.onclose = () => r()))
    await t.start()
    await exited
    const said = () =>
      lines.filter((l) => l.client === 'kid' && l.msg === 'tool host stderr').map((l) => l.stderr)
    await eventually(() => said().length === 3, 3000, 'three stderr lines')
    expect(said()).toEqual([`cwd=${cwd}`, 'configured=cf inherited=in', 'token=undefined git_dir=undefined'])
  })

  it('sends the configured headers on an HTTP host, and reports a POST answer stream cut short', async () => {
    const seen: http.IncomingHttpHeaders[] = []
    const server = http.createServer((req, res) => {
      seen.push(req.headers)
      req.resume()
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'text/event-stream' })
        res.write(': a comment, then nothing\n\n')
        setTimeout(() => res.socket?.destroy(), 30)
      })
    })
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`
    const cuts: unknown[] = []
    const t = openTransport(
      'web',
      { mcp: { url, headers: { 'x-fixture': 'yes', authorization: 'Bearer abc' } } },
      pino({ level: 'silent' }),
      (err) => cuts.push(err),
    )
    try {
      expect(t).toBeInstanceOf(StreamableHTTPClientTransport)
      t.onerror = () => undefined
      await t.start()
      await t.send({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} })
      await eventually(() => cuts.length === 1, 3000, 'the cut to be reported')
      expect(seen[0]).toMatchObject({ 'x-fixture': 'yes', authorization: 'Bearer abc' })
    } finally {
      await t.close()
      server.closeAllConnections()
      await new Promise<void>((r) => server.close(() => r()))
    }
  })
})
