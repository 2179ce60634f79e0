/**
 * In-process stage runs for the stage tests: a real ServerContext (real home, journal, inline
 * committer, no socket), a request accepted from real bytes, and a route as resolve hands it over.
 * Invariant: everything `stageContext` makes is closed and removed by its `close()`.
 */
import fs from 'node:fs'
import type { IncomingHttpHeaders } from 'node:http'
import { ServerContext } from '../../../proxy/live/context'
import type { JsonObject } from '../../../proxy/core/json'
import type { Dialect } from '../../../proxy/dialects'
import { silentLogger } from '../../../proxy/process/log'
import type { HoldfastConfig } from '../../../proxy/store/config'
import { type Committer, InlineCommitter } from '../../../proxy/record/commit/committer'
import { Upstream } from '../../../proxy/http/upstream'
import { accept, type Accepted } from '../../../proxy/stages/accept'
import type { Route } from '../../../proxy/stages/resolve'
import type { Change } from '../../../generated/meta'
import { tempHome } from '../../support/harness'

export const CONFIG: HoldfastConfig = {
  listen: { host: '127.0.0.1', port: 0 },
  defaults: { workspace: 'default', agent: 'main' },
  providers: {
    anthropic: { dialect: 'anthropic', base_url: 'http://127.0.0.1:9' },
    openai: { dialect: 'openai', base_url: 'http://127.0.0.1:9/v1' },
    keyed: { dialect: 'openai', base_url: 'http://127.0.0.1:9/v1', prompt_cache_key: 'agent' },
  },
}

export interface StageRun {
  home: string
  ctx: ServerContext
  close(): Promise<void>
}

export function stageContext(committer: Committer = new InlineCommitter()): StageRun {
  const home = tempHome()
  const upstream = new Upstream({ headersTimeoutMs: 1000, bodyTimeoutMs: 1000 })
  const ctx = new ServerContext(home, CONFIG, upstream, silentLogger(), committer)
  return {
    home,
    ctx,
    close: async () => {
      await ctx.drain()
      ctx.close()
      await committer.close()
      await upstream.close()
      fs.rmSync(home, { recursive: true, force: true })
    },
  }
}

/** The request `raw` as accept hands it on (a step of `dialect`, addressed to w/main). */
export function accepted(
  dialect: Dialect,
  raw: string | Buffer,
  headers: IncomingHttpHeaders = { 'content-type': 'application/json' },
  path = dialect.endpoint,
): Accepted {
  const bytes = Buffer.isBuffer(raw) ? raw : Buffer.from(raw)
  return accept(
    {
      kind: 'step',
      dialect,
      path,
      workspace: 'w',
      agent: 'main',
      headers,
      tokenCarried: false,
      body: async () => bytes,
    },
    bytes,
  )
}

/** A route to provider row `provider` of CONFIG, with the fields and changes a role would set. */
export function routeTo(provider: string, overrides: JsonObject = {}, changes: Change[] = []): Route {
  const row = CONFIG.providers[provider]!
  return {
    plugin: null,
    provider,
    row,
    key: undefined,
    url: new URL(
      row.base_url.replace(/\/+$/, '') + (row.dialect === 'openai' ? '/chat/completions' : '/v1/messages'),
    ),
    model: typeof overrides.model === 'string' ? overrides.model : null,
    role: null,
    configCommit: null,
    configNote: null,
    overrides,
    changes,
  }
}
