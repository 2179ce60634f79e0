/**
 * `git http-backend` (CGI) behind node:http, as its own process, for the remote's tests:
 *   node -r ./scripts/register.js test/support/git-http-main.ts <base> <port>
 * serves the bare repositories under <base> on 127.0.0.1:<port> (pushes allowed: REMOTE_USER is
 * set). Invariant: the first stdout line is `git http listening on http://127.0.0.1:PORT`; SIGTERM
 * stops it at once (open connections are cut, as a server that goes down does).
 */
import { spawn } from 'node:child_process'
import http from 'node:http'
import { cleanGitEnv } from './git-servers'

/** Run `git http-backend` for one request, its CGI answer turned into the HTTP response. */
function cgi(base: string, req: http.IncomingMessage, res: http.ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://127.0.0.1')
  const headers: Record<string, string> = {}
  for (const [k, v] of Object.entries(req.headers))
    if (typeof v === 'string') headers[`HTTP_${k.toUpperCase().replace(/-/g, '_')}`] = v
  const child = spawn('git', ['http-backend'], {
    env: cleanGitEnv({
      ...headers,
      GIT_PROJECT_ROOT: base,
      GIT_HTTP_EXPORT_ALL: '1',
      PATH_INFO: decodeURIComponent(url.pathname),
      QUERY_STRING: url.search.slice(1),
      REQUEST_METHOD: req.method ?? 'GET',
      CONTENT_TYPE: req.headers['content-type'] ?? '',
      REMOTE_ADDR: '127.0.0.1',
      REMOTE_USER: 'test',
    }),
    stdio: ['pipe', 'pipe', 'ignore'],
  })
  req.pipe(child.stdin)
  child.stdin.on('error', () => undefined) // the backend may answer before reading everything
  let head = Buffer.alloc(0)
  let sent = false
  child.stdout.on('data', (chunk: Buffer) => {
    if (sent) return void res.write(chunk)
    head = Buffer.concat([head, chunk])
    const end = head.indexOf('\r\n\r\n')
    if (end < 0) return
    let status = 200
    for (const line of head.subarray(0, end).toString('latin1').split('\r\n')) {
      const i = line.indexOf(':')
      const name = line.slice(0, i).trim()
      const value = line.slice(i + 1).trim()
      if (name.toLowerCase() === 'status') status = parseInt(value, 10)
      else res.setHeader(name, value)
    }
    res.writeHead(status)
    sent = true
    res.write(head.subarray(end + 4))
  })
  child.on('close', () => {
    if (!sent) res.writeHead(502)
    res.end()
  })
}

const [base, port] = process.argv.slice(2)
if (!base || !port) throw new Error('usage: git-http-main.ts <base> <port>')
const server = http.createServer((req, res) => cgi(base, req, res))
server.listen(Number(port), '127.0.0.1', () => {
  process.stdout.write(`git http listening on http://127.0.0.1:${port}\n`)
})
process.once('SIGTERM', () => {
  server.closeAllConnections()
  server.close(() => process.exit(0))
})
