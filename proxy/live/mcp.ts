/**
 * holdfast's MCP endpoint (DESIGN §7, §13): `/w/<ws>/a/<agent>/mcp` (or `/mcp`, addressed by the
 * `x-holdfast-*` headers or the defaults) is a streamable-HTTP MCP server whose tools are `clients`
 * plus the agent's loaded set under presented names with their frozen definitions. Calls are
 * routed exactly as `/_holdfast/tools/call` routes them. Invariant: a session belongs to the
 * agent it was opened for; what `tools/list` answers changes only by a load act, and every act
 * on an agent's loaded set sends `notifications/tools/list_changed` to each of its open sessions.
 * State: the sessions, in memory (a restart ends them; clients re-initialize).
 */
import type http from 'node:http'
import { randomUUID } from 'node:crypto'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import {
  CallToolRequestSchema,
  isInitializeRequest,
  ListToolsRequestSchema,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js'
import { HARNESS_SERVER } from '../core/harness-tools'
import { presentedName } from '../core/loaded-set'
import type { Caller } from '../core/tool-sentences'
import { readLoadedSet, loadedSetChanges, type LoadedSetChange } from '../store/loaded-sets'
import { routeCall } from '../tools/calls'
import { CLIENTS_TOOL_NAME, CLIENTS_TOOL_DESCRIPTION, CLIENTS_TOOL_SCHEMA } from '../tools/clients-tool'
import type { ToolHosts } from '../tools/hosts'
import { readJsonBody } from '../admin/body'
import { ERROR_CODES, HoldfastError, type ErrorCode } from '../core/errors'
import { sendError } from '../http/respond'

interface Session {
  workspace: string
  agent: string
  server: Server
  transport: StreamableHTTPServerTransport
}

/** The tools an agent's MCP session lists: `clients`, then the loaded set in stored order. */
export function sessionTools(home: string, workspace: string, agent: string): Tool[] {
  const tools: Tool[] = [
    {
      name: CLIENTS_TOOL_NAME,
      description: CLIENTS_TOOL_DESCRIPTION,
      inputSchema: CLIENTS_TOOL_SCHEMA as Tool['inputSchema'],
    },
  ]
  for (const e of readLoadedSet(home, workspace, agent)) {
    tools.push({
      name: presentedName(e),
      description: e.tool.description,
      inputSchema: e.tool.input_schema as Tool['inputSchema'],
    })
  }
  return tools
}

/**
 * How the MCP client of a session names this server's tools for its model: Claude Code calls
 * them `mcp__<server>__<tool>` (the server named `holdfast`, as `holdfast run` configures it) and
 * may defer new ones behind its tool search; another harness is told the name this server lists.
 */
export function callerOf(client: { name?: string } | undefined): Caller {
  if (/claude/i.test(client?.name ?? ''))
    return { callableAs: (name) => `mcp__${HARNESS_SERVER}__${name}`, deferred: true }
  return { callableAs: (name) => name, deferred: false }
}

/**
 * A JSON-RPC error answer outside any session (the transport answers inside one): the body MCP
 * clients read, the status and `x-holdfast-error` of the table's code.
 */
function rpcError(res: http.ServerResponse, fault: ErrorCode, code: number, message: string): void {
  const body = JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null })
  res.writeHead(ERROR_CODES[fault].status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    'x-holdfast-error': fault,
  })
  res.end(body)
}

/** The methods of streamable HTTP: POST a message, GET a session's stream, DELETE a session. */
const MCP_METHODS = ['GET', 'POST', 'DELETE']

export class McpEndpoint {
  private readonly sessions = new Map<string, Session>()
  private readonly onChange = (c: LoadedSetChange): void => {
    if (c.home !== this.hosts.home) return
    for (const s of this.sessions.values()) {
      if (s.workspace === c.workspace && s.agent === c.agent) {
        s.server.sendToolListChanged().catch(() => undefined) // a session gone meanwhile
      }
    }
  }

  constructor(
    private readonly hosts: ToolHosts,
    private readonly version: string,
  ) {
    loadedSetChanges.on('changed', this.onChange)
  }

  /** Open sessions of one agent (health and tests). */
  openSessions(workspace: string, agent: string): number {
    let n = 0
    for (const s of this.sessions.values()) if (s.workspace === workspace && s.agent === agent) n++
    return n
  }

  private open(workspace: string, agent: string): StreamableHTTPServerTransport {
    const server = new Server(
      { name: 'holdfast', version: this.version },
      {
        capabilities: { tools: { listChanged: true } },
        instructions:
          `The tools of ${workspace}/${agent}: "clients" lists the tool hosts of this workspace and ` +
          'loads or unloads their tools for this conversation; loaded tools follow under their presented names.',
      },
    )
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: sessionTools(this.hosts.home, workspace, agent),
    }))
    server.setRequestHandler(CallToolRequestSchema, async (request) => {
      const r = await routeCall(
        this.hosts,
        workspace,
        agent,
        request.params.name,
        request.params.arguments ?? {},
        callerOf(server.getClientVersion()),
      )
      return { content: r.content as { type: 'text'; text: string }[], isError: r.is_error }
    })
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        this.sessions.set(id, { workspace, agent, server, transport })
      },
    })
    transport.onclose = () => {
      if (transport.sessionId) this.sessions.delete(transport.sessionId)
    }
    void server.connect(transport)
    return transport
  }

  /** One HTTP request to the endpoint of `workspace`/`agent` (already guarded like `/_holdfast/`). */
  async handle(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    workspace: string,
    agent: string,
  ): Promise<void> {
    if (!MCP_METHODS.includes(req.method ?? '')) {
      res.setHeader('allow', MCP_METHODS.join(', '))
      return sendError(
        res,
        undefined,
        new HoldfastError(
          'METHOD_NOT_ALLOWED',
          `${req.method ?? ''} is not a method of the MCP endpoint (streamable HTTP: ${MCP_METHODS.join(', ')})`,
        ),
      )
    }
    const body = req.method === 'POST' ? await readJsonBody(req).catch((err: Error) => err) : undefined
    if (body instanceof Error)
      return rpcError(
        res,
        body instanceof HoldfastError ? body.code : 'BAD_JSON',
        -32700,
        `the request body is not JSON: ${body.message}`,
      )
    const header = req.headers['mcp-session-id']
    const id = Array.isArray(header) ? header[0] : header
    if (id !== undefined) {
      const s = this.sessions.get(id)
      if (!s)
        return rpcError(
          res,
          'MCP_SESSION_UNKNOWN',
          -32001,
          `no MCP session ${id} (it ended, or holdfast restarted): initialize again`,
        )
      if (s.workspace !== workspace || s.agent !== agent) {
        return rpcError(
          res,
          'MCP_SESSION_REFUSED',
          -32001,
          `MCP session ${id} belongs to ${s.workspace}/${s.agent}, not ${workspace}/${agent}`,
        )
      }
      return s.transport.handleRequest(req, res, body)
    }
    if (req.method !== 'POST' || !isInitializeRequest(body)) {
      return rpcError(
        res,
        'MCP_NO_SESSION',
        -32000,
        'no mcp-session-id: a session starts with an initialize request',
      )
    }
    await this.open(workspace, agent).handleRequest(req, res, body)
  }

  /** End every session (shutdown): open streams close, clients see the session end. */
  async close(): Promise<void> {
    loadedSetChanges.off('changed', this.onChange)
    const all = [...this.sessions.values()]
    this.sessions.clear()
    await Promise.allSettled(all.map((s) => s.server.close()))
  }
}
