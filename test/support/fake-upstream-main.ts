/**
 * Runs the fake upstream as its own process, for the benchmark and for driving real clients:
 *   node -r ./scripts/register.js test/support/fake-upstream-main.ts --port 0
 *   [--latency-ms N] [--no-cache-model] [--script JSON]... [--record DIR]
 * `--script` enqueues a Script (repeatable, taken in order); `--record` writes every request to
 * DIR/NNN-METHOD-path.json as {method, url, headers, body} with credentials redacted.
 * Invariant: the first stdout line is `fake upstream listening on http://127.0.0.1:PORT`;
 * SIGTERM or SIGINT closes the server and exits 0.
 */
import fs from 'node:fs'
import path from 'node:path'
import { startFakeUpstream, type FakeUpstreamOptions, type Received, type Script } from './fake-upstream'

/** Header names whose values are credentials: recorded as `<redacted>`. */
const SECRET_HEADERS = new Set(['authorization', 'x-api-key', 'api-key', 'cookie', 'proxy-authorization'])

interface Args {
  options: FakeUpstreamOptions
  scripts: Script[]
  record: string | undefined
}

function parseArgs(argv: string[]): Args {
  const args: Args = { options: {}, scripts: [], record: undefined }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    const value = (): string => {
      const next = argv[++i]
      if (next === undefined) throw new Error(`${arg} needs a value`)
      return next
    }
    const number = (): number => {
      const n = Number(value())
      if (!Number.isInteger(n) || n < 0) throw new Error(`${arg} needs a non-negative integer`)
      return n
    }
    if (arg === '--port') args.options.port = number()
    else if (arg === '--latency-ms') args.options.latencyMs = number()
    else if (arg === '--no-cache-model') args.options.cacheModel = false
    else if (arg === '--script') args.scripts.push(JSON.parse(value()) as Script)
    else if (arg === '--record') args.record = value()
    else throw new Error(`unknown argument: ${arg}`)
  }
  return args
}

/** One request as a fixture: headers with credentials redacted, a JSON body parsed (else text). */
export function recordOf(request: Received): object {
  const headers: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(request.headers)) {
    headers[name] = SECRET_HEADERS.has(name) ? '<redacted>' : value
  }
  const text = request.body.toString('utf8')
  let body: unknown = text
  try {
    body = text === '' ? null : JSON.parse(text)
  } catch {
    // not JSON: kept as text
  }
  return { method: request.method, url: request.url, headers, body }
}

function recorder(dir: string): (request: Received) => void {
  fs.mkdirSync(dir, { recursive: true })
  let n = 0
  return (request) => {
    const slug = new URL(request.url, 'http://x').pathname
      .replace(/[^A-Za-z0-9]+/g, '-')
      .replace(/^-|-$/g, '')
    const file = path.join(dir, `${String(++n).padStart(3, '0')}-${request.method}-${slug}.json`)
    fs.writeFileSync(file, `${JSON.stringify(recordOf(request), null, 2)}\n`)
  }
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2))
  if (args.record !== undefined) args.options.onReceived = recorder(args.record)
  const fake = await startFakeUpstream(args.options)
  for (const script of args.scripts) fake.enqueue(script)
  process.stdout.write(`fake upstream listening on ${fake.url}\n`)
  const stop = (): void => {
    fake.close().then(
      () => process.exit(0),
      (err: unknown) => {
        process.stderr.write(`fake upstream: close failed: ${String(err)}\n`)
        process.exit(1)
      },
    )
  }
  process.once('SIGTERM', stop)
  process.once('SIGINT', stop)
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`fake upstream: ${err instanceof Error ? err.message : String(err)}\n`)
    process.exit(2)
  })
}
