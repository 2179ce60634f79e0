/**
 * Runs the fake upstream as its own process, for the benchmark:
 *   node -r ./scripts/register.js test/support/fake-upstream-main.ts --port 0
 *   [--latency-ms N] [--no-cache-model]
 * Invariant: the first stdout line is `fake upstream listening on http://127.0.0.1:PORT`;
 * SIGTERM or SIGINT closes the server and exits 0.
 */
import { startFakeUpstream, type FakeUpstreamOptions } from './fake-upstream'

function parseArgs(argv: string[]): FakeUpstreamOptions {
  const options: FakeUpstreamOptions = {}
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    const number = (): number => {
      const value = Number(argv[++i])
      if (!Number.isInteger(value) || value < 0) throw new Error(`${arg} needs a non-negative integer`)
      return value
    }
    if (arg === '--port') options.port = number()
    else if (arg === '--latency-ms') options.latencyMs = number()
    else if (arg === '--no-cache-model') options.cacheModel = false
    else throw new Error(`unknown argument: ${arg}`)
  }
  return options
}

async function main(): Promise<void> {
  const fake = await startFakeUpstream(parseArgs(process.argv.slice(2)))
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

main().catch((err: unknown) => {
  process.stderr.write(`fake upstream: ${err instanceof Error ? err.message : String(err)}\n`)
  process.exit(2)
})
