/**
 * The two ways to reach a tool host (DESIGN §7) and how its failures read. stdio: the child gets
 * holdfast's environment (minus HOLDFAST_TOKEN) plus the configured `env` — the SDK alone would
 * pass only HOME, PATH and a few more — and its stderr is logged line by line under the client's
 * name, never mixed into holdfast's stdout. Streamable HTTP: the configured headers on every
 * request, and a POST answer stream cut short is reported (see ./cut-streams).
 */
import { childEnv } from '../process/spawn'
import readline from 'node:readline'
import { Readable } from 'node:stream'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js'
import type { Client as ClientSpec, McpHttp, McpStdio } from '../../generated/holdfast'
import type { Logger } from '../process/log'
import { fetchNoticingCuts } from './cut-streams'

export type Transport = StdioClientTransport | StreamableHTTPClientTransport

/** How a host failed: never reached, no answer in time, went away, or answered with an error. */
export type FailureKind = 'unreachable' | 'timeout' | 'gone' | 'refused'

export class HostFailure extends Error {
  constructor(
    readonly kind: FailureKind,
    why: string,
  ) {
    super(why)
    this.name = 'HostFailure'
  }
}

/** One line for any failure, with a fetch error's cause (ECONNREFUSED …) when it has one. */
export function describe(err: unknown): string {
  const e = err as Error & { cause?: { message?: string } }
  const cause = e?.cause?.message
  const message = e?.message ?? String(err)
  return cause && !message.includes(cause) ? `${message} (${cause})` : message
}

/**
 * What a thrown error says about the host: no answer in time; never reached (while connecting);
 * answered with a JSON-RPC error or failed the SDK's checks (refused); or gone from under a request.
 */
export function classify(err: unknown, connecting: boolean): HostFailure {
  if (err instanceof HostFailure) return err
  if (err instanceof McpError && err.code === (ErrorCode.RequestTimeout as number))
    return new HostFailure('timeout', describe(err))
  if (connecting) return new HostFailure('unreachable', describe(err))
  if (err instanceof McpError && err.code !== (ErrorCode.ConnectionClosed as number))
    return new HostFailure('refused', describe(err))
  return new HostFailure('gone', describe(err))
}

/** A fresh transport for `spec`; `onCut` hears of an HTTP answer stream cut short. */
export function openTransport(
  name: string,
  spec: ClientSpec,
  log: Logger,
  onCut: (err: unknown) => void,
): Transport {
  const mcp = spec.mcp
  if ('url' in mcp) {
    const http = mcp as McpHttp
    return new StreamableHTTPClientTransport(new URL(http.url), {
      requestInit: { headers: http.headers ?? {} },
      fetch: fetchNoticingCuts(onCut),
      reconnectionOptions: {
        initialReconnectionDelay: 500,
        maxReconnectionDelay: 5000,
        reconnectionDelayGrowFactor: 2,
        maxRetries: 2,
      },
    })
  }
  const stdio = mcp as McpStdio
  const t = new StdioClientTransport({
    command: stdio.command,
    args: stdio.args ?? [],
    env: childEnv(stdio.env, ['HOLDFAST_TOKEN']),
    cwd: stdio.cwd,
    stderr: 'pipe',
  })
  const err = t.stderr // a PassThrough, there before the child starts (stderr: 'pipe')
  if (err instanceof Readable) {
    readline
      .createInterface({ input: err })
      .on('line', (line) => log.info({ client: name, stderr: line }, 'tool host stderr'))
  }
  return t
}
