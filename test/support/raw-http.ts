/**
 * Plain node:http exchanges for the proxy's integration tests: exact request bytes and headers
 * out (no URL normalization, no automatic decompression), every response chunk with its arrival
 * time in, plus a listing of every path under a directory to prove that nothing was written.
 */
import fs from 'node:fs'
import http from 'node:http'
import path from 'node:path'

export interface RawResponse {
  status: number
  headers: http.IncomingHttpHeaders
  body: Buffer
  /** Each chunk as it arrived, `at` in ms since the request was sent. */
  chunks: { at: number; bytes: Buffer }[]
  /** ms from sending to the end of the response. */
  totalMs: number
}

export interface RawRequest {
  method?: string
  /** Sent exactly as given (`/w/../a/main/v1/messages` stays as is). */
  path: string
  headers?: http.OutgoingHttpHeaders
  body?: string | Buffer
  /** Send the body with `transfer-encoding: chunked` (no content-length). */
  chunked?: boolean
}

/** One exchange on a fresh connection; rejects when the response does not end cleanly. */
export function rawRequest(base: string, r: RawRequest): Promise<RawResponse> {
  const url = new URL(base)
  const headers: http.OutgoingHttpHeaders = { ...r.headers }
  if (r.body !== undefined && !r.chunked && headers['content-length'] === undefined)
    headers['content-length'] = Buffer.byteLength(r.body)
  return new Promise((resolve, reject) => {
    const t0 = performance.now()
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        method: r.method ?? 'POST',
        path: r.path,
        headers,
        agent: false,
      },
      (res) => {
        const chunks: { at: number; bytes: Buffer }[] = []
        res.on('data', (bytes: Buffer) => chunks.push({ at: performance.now() - t0, bytes }))
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks.map((c) => c.bytes)),
            chunks,
            totalMs: performance.now() - t0,
          }),
        )
        res.on('error', reject)
        res.on('aborted', () => reject(new Error('the response was aborted')))
      },
    )
    req.on('error', reject)
    if (r.body === undefined) req.end()
    else if (r.chunked) {
      const body = Buffer.from(r.body)
      const half = Math.floor(body.length / 2)
      req.write(body.subarray(0, half))
      req.end(body.subarray(half))
    } else req.end(r.body)
  })
}

/** POST a JSON body (a string: sent byte for byte) with the headers an anthropic client sends. */
export function postAnthropic(
  base: string,
  path_: string,
  body: string | Buffer,
  headers: http.OutgoingHttpHeaders = {},
): Promise<RawResponse> {
  return rawRequest(base, {
    path: path_,
    body,
    headers: {
      'content-type': 'application/json',
      'anthropic-version': '2023-06-01',
      'x-api-key': 'sk-test',
      ...headers,
    },
  })
}

/** POST a JSON body (a string: sent byte for byte) with the headers an openai client sends. */
export function postOpenai(
  base: string,
  path_: string,
  body: string | Buffer,
  headers: http.OutgoingHttpHeaders = {},
): Promise<RawResponse> {
  return rawRequest(base, {
    path: path_,
    body,
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test', ...headers },
  })
}

/** Every file and directory under `dir`, relative and sorted ([] when `dir` is absent). */
export function listTree(dir: string): string[] {
  const out: string[] = []
  const walk = (rel: string): void => {
    let entries: fs.Dirent[]
    try {
      entries = fs.readdirSync(path.join(dir, rel), { withFileTypes: true })
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return
      throw err
    }
    for (const e of entries) {
      const p = rel ? `${rel}/${e.name}` : e.name
      out.push(e.isDirectory() ? `${p}/` : p)
      if (e.isDirectory()) walk(p)
    }
  }
  walk('')
  return out.sort()
}

/** The contents of every regular file under `dir`, concatenated (for "this secret is nowhere"). */
export function allFileBytes(dir: string): Buffer {
  const parts: Buffer[] = []
  for (const rel of listTree(dir)) {
    if (rel.endsWith('/')) continue
    const file = path.join(dir, rel)
    if (fs.lstatSync(file).isFile()) parts.push(fs.readFileSync(file))
  }
  return Buffer.concat(parts)
}

/** A loopback port with nothing listening on it (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = http.createServer()
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  const { port } = server.address() as { port: number }
  await new Promise<void>((r) => server.close(() => r()))
  return port
}
