/**
 * The one client of the admin surface (`/_holdfast/…`), for the CLI's commands and the git hook:
 * find the running serve of a home (serve.json), send the home's token, send JSON, read JSON back,
 * and map what can go wrong to one sentence. Invariant: no serve running is `undefined` (the
 * caller decides: work without it, or refuse); a serve that does not answer in time, or answers
 * what is not JSON, is an AskError naming its URL; an error the serve answered carries its own
 * message. The status line keeps its own node-only client (Claude Code runs it after every message).
 */
import { loadConfig } from '../store/config'
import { readServeInfo } from '../store/serve-lock'
import { homeToken, readTokenFile } from '../store/token'

export class AskError extends Error {
  constructor(
    message: string,
    /** The serve's status, when it answered. */
    readonly status?: number,
  ) {
    super(message)
    this.name = 'AskError'
  }
}

export interface AskOptions {
  method?: 'GET' | 'POST'
  body?: object
  /** Give up after this long (default: no limit but the serve's own). */
  timeoutMs?: number
}

/** The home's token as the serve checks it: the configured one, else the token file. */
function tokenOf(home: string): string | undefined {
  try {
    return homeToken(home, loadConfig(home))
  } catch {
    // A holdfast.yaml that does not load (the hook runs whatever the file says): env, then the file.
    return process.env.HOLDFAST_TOKEN || readTokenFile(home)
  }
}

/**
 * `route` (a path under the serve's URL, with its query) of the home's running serve; undefined
 * when none runs. Resolves with the answer's JSON when it is a 2xx; throws AskError otherwise.
 */
export async function askServe<T>(
  home: string,
  route: string,
  opts: AskOptions = {},
): Promise<T | undefined> {
  const info = readServeInfo(home)
  if (!info) return undefined
  const token = tokenOf(home)
  const url = `${info.url}${route}`
  let res: Response
  try {
    res = await fetch(url, {
      method: opts.method ?? (opts.body === undefined ? 'GET' : 'POST'),
      headers: { 'content-type': 'application/json', ...(token ? { 'x-holdfast-token': token } : {}) },
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      ...(opts.timeoutMs !== undefined ? { signal: AbortSignal.timeout(opts.timeoutMs) } : {}),
    })
  } catch (err) {
    const e = err as Error
    const why = e.name === 'TimeoutError' ? `no answer in ${opts.timeoutMs} ms` : e.message
    throw new AskError(`holdfast serve at ${info.url} did not answer: ${why}`)
  }
  const text = await res.text()
  let json: unknown
  try {
    json = text === '' ? {} : JSON.parse(text)
  } catch {
    throw new AskError(
      `holdfast serve at ${info.url} answered ${res.status} with what is not JSON`,
      res.status,
    )
  }
  if (!res.ok) {
    const message = (json as { error?: { message?: string } }).error?.message
    throw new AskError(message ?? `holdfast serve answered ${res.status}`, res.status)
  }
  return json as T
}
