/**
 * One tool host's MCP session (DESIGN §7), over stdio or streamable HTTP: connected lazily on first
 * use, listed page by page (`nextCursor`), called with an explicit deadline (the SDK's own default
 * is 60 s), and reconnected on the next use after it went away — at once the first time, then with
 * doubling waits. Invariant: at most one session per client, and `close` leaves no child running.
 * The transports themselves (a child's environment and stderr, HTTP headers) are in ./transports.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import {
  ToolListChangedNotificationSchema,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js'
import type { Client as ClientSpec } from '../../generated/holdfast'
import type { Logger } from '../process/log'
import { classify, describe, HostFailure, openTransport, type Transport } from './transports'

export { HostFailure }

export interface Backoff {
  /** The wait before the second reconnect in a row; each later one doubles it. */
  baseMs: number
  maxMs: number
}

const CLIENT_INFO = { name: 'holdfast', version: '0.1.0' }
const MAX_PAGES = 1000

const remaining = (deadline: number): number => Math.max(1, deadline - Date.now())

interface Session {
  client: Client
  transport: Transport
}

export class HostConnection {
  private session: Session | undefined
  private connecting: Promise<Client> | undefined
  private failures = 0
  private retryAt = 0
  private closed = false
  /** Why the last attempt failed; null after a successful request. */
  lastError: string | null = null
  /** The host sends `notifications/tools/list_changed` (so its last listing stays current). */
  listChanged = false
  /** The last full listing of the current session; cleared when it goes away or says it changed. */
  tools: Tool[] | undefined

  constructor(
    readonly name: string,
    private readonly spec: ClientSpec,
    private readonly log: Logger,
    private readonly backoff: Backoff,
    private readonly onListChanged: () => void,
  ) {}

  get connected(): boolean {
    return this.session !== undefined
  }

  private fail(why: string): void {
    this.failures++
    const wait = this.failures <= 1 ? 0 : this.backoff.baseMs * 2 ** (this.failures - 2)
    this.retryAt = Date.now() + Math.min(wait, this.backoff.maxMs)
    this.lastError = why
  }

  /** The live session, connecting when there is none (refused while a backoff wait runs). */
  private open(deadline: number): Promise<Client> {
    if (this.closed) return Promise.reject(new HostFailure('unreachable', 'holdfast is shutting down'))
    if (this.session) return Promise.resolve(this.session.client)
    const wait = this.retryAt - Date.now()
    if (wait > 0) {
      return Promise.reject(
        new HostFailure('unreachable', `${this.lastError ?? 'it went away'}; next attempt in ${wait} ms`),
      )
    }
    this.connecting ??= this.connect(deadline).finally(() => (this.connecting = undefined))
    return this.connecting
  }

  private async connect(deadline: number): Promise<Client> {
    const client = new Client(CLIENT_INFO, { capabilities: {} })
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      this.tools = undefined
      this.onListChanged()
    })
    client.onerror = (err) => this.log.debug({ client: this.name, err: describe(err) }, 'tool host transport')
    const transport: Transport = openTransport(this.name, this.spec, this.log, (err) => {
      const s = this.session
      if (s?.transport !== transport) return
      this.drop(s, `the host cut its answer short (${describe(err)})`).catch((e: unknown) =>
        this.log.warn({ client: this.name, err: describe(e) }, 'closing a cut session failed'),
      )
    })
    try {
      await client.connect(transport, { timeout: remaining(deadline) })
    } catch (err) {
      await this.shut({ client, transport })
      const failure = classify(err, true)
      this.fail(failure.kind === 'timeout' ? `no answer to initialize (${failure.message})` : failure.message)
      throw new HostFailure('unreachable', this.lastError ?? failure.message)
    }
    if (this.closed) {
      await this.shut({ client, transport })
      throw new HostFailure('unreachable', 'holdfast is shutting down')
    }
    this.session = { client, transport }
    this.listChanged = client.getServerCapabilities()?.tools?.listChanged === true
    client.onclose = () => {
      if (this.session?.client !== client) return
      this.session = undefined
      this.tools = undefined
      if (this.closed) return
      this.fail('the connection closed')
      this.log.warn({ client: this.name }, 'tool host went away; it is reconnected on next use')
    }
    return client
  }

  /** Drop a session shown dead (its child killed); the next use reconnects. */
  private async drop(s: Session, why: string): Promise<void> {
    if (this.session !== s) return
    this.session = undefined
    this.tools = undefined
    this.fail(why)
    await this.shut(s)
  }

  /**
   * `fn` on the live session within the deadline. A host that lost the session (HTTP 404: it did
   * not run the request) is reconnected and asked once more; other failures are HostFailure.
   */
  private async attempt<T>(deadline: number, fn: (c: Client) => Promise<T>): Promise<T> {
    for (let retried = false; ; retried = true) {
      const client = await this.open(deadline)
      try {
        const out = await fn(client)
        this.failures = 0
        this.retryAt = 0
        this.lastError = null
        return out
      } catch (err) {
        const failure = classify(err, false)
        const s = this.session
        if (failure.kind === 'gone' && s?.client === client) await this.drop(s, failure.message)
        const lost = err instanceof StreamableHTTPError && err.code === 404
        if (!lost || retried) throw failure
      }
    }
  }

  /** Every tool the host advertises now, following `nextCursor` until it is absent. */
  list(deadline: number): Promise<Tool[]> {
    return this.attempt(deadline, async (client) => {
      const all: Tool[] = []
      const seen = new Set<string>()
      let cursor: string | undefined
      for (let page = 0; ; page++) {
        if (page >= MAX_PAGES) throw new HostFailure('refused', `tools/list ran past ${MAX_PAGES} pages`)
        const r = await client.listTools(cursor === undefined ? undefined : { cursor }, {
          timeout: remaining(deadline),
        })
        all.push(...r.tools)
        if (r.nextCursor === undefined) break
        if (seen.has(r.nextCursor)) throw new HostFailure('refused', `tools/list repeated a cursor`)
        seen.add(r.nextCursor)
        cursor = r.nextCursor
      }
      // The SDK keeps output-schema validators from the last page only; give it the whole list.
      const sdk = client as unknown as { cacheToolMetadata?: (tools: Tool[]) => void }
      if (typeof sdk.cacheToolMetadata === 'function') sdk.cacheToolMetadata(all)
      this.tools = all
      return all
    })
  }

  /** One `tools/call` within the deadline; failures are HostFailure, results as the host sent them. */
  call(tool: string, input: Record<string, unknown>, deadline: number): Promise<CallToolResult> {
    return this.attempt(
      deadline,
      async (client) =>
        (await client.callTool({ name: tool, arguments: input }, undefined, {
          timeout: remaining(deadline),
        })) as CallToolResult,
    )
  }

  /** Connect now when not connected (within `deadline`). Throws HostFailure. */
  async ready(deadline: number): Promise<void> {
    await this.open(deadline)
  }

  /** Kill the child (SIGTERM now; the SDK escalates to SIGKILL) and close the transport. */
  private async shut(s: Session): Promise<void> {
    const pid = s.transport instanceof StdioClientTransport ? s.transport.pid : null
    if (pid !== null) {
      try {
        process.kill(pid, 'SIGTERM')
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err // ESRCH: already gone
      }
    }
    await s.client.close()
  }

  /** Close for good: no later use reconnects. */
  async close(): Promise<void> {
    this.closed = true
    const pending = this.connecting
    if (pending) await pending.catch(() => undefined) // its failure was recorded; it shut itself
    const s = this.session
    this.session = undefined
    if (s) await this.shut(s)
  }
}
