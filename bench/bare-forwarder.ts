/**
 * The benchmark's reference point: the least a forwarding proxy can be on this machine — read the
 * body, send it with undici, stream the answer back — with no parsing, no record and no commit.
 * Prints `bare forwarder listening on http://127.0.0.1:PORT`; `node -r scripts/register.js
 * bench/bare-forwarder.ts <upstream-url>`.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { Agent, type Dispatcher } from 'undici'

const upstream = new URL(process.argv[2] ?? 'http://127.0.0.1:1')
const agent = new Agent({ keepAliveTimeout: 30_000, connections: 64 })

const server = http.createServer({ noDelay: true, keepAlive: true }, (req, res) => {
  void (async () => {
    const chunks: Buffer[] = []
    for await (const c of req as AsyncIterable<Buffer>) chunks.push(c)
    const body = Buffer.concat(chunks)
    const up = await agent.request({
      origin: upstream.origin,
      path: req.url ?? '/',
      method: (req.method ?? 'POST') as Dispatcher.HttpMethod,
      headers: { 'content-type': 'application/json', 'content-length': String(body.length) },
      body,
    })
    res.writeHead(up.statusCode, { 'content-type': String(up.headers['content-type'] ?? '') })
    for await (const c of up.body as AsyncIterable<Buffer>) res.write(c)
    res.end()
  })().catch((err) => {
    process.stderr.write(`BARE ${String(err)}\n`)
    res.destroy()
  })
})
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(
    `bare forwarder listening on http://127.0.0.1:${(server.address() as AddressInfo).port}\n`,
  )
})
process.on('SIGTERM', () => server.close(() => process.exit(0)))
