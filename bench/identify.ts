/**
 * What the plugin chain costs a request before it is numbered: `begin` + `identify` in-process,
 * with the default chain (the built-in claude-code plugin) and with none, for a request that is
 * not Claude Code's and for one that is (a subagent's headers). No HTTP. Run:
 * `node -r ./scripts/register.js bench/identify.ts [calls=20000]`. Measures; asserts nothing.
 */
import os from 'node:os'
import { performance } from 'node:perf_hooks'
import { loadPlugins } from '../plugins/loader'
import { sanitizeHeaders } from '../proxy/core/headers'
import { silentLogger } from '../proxy/process/log'
import { filler } from './procs'

const N = Number(process.argv[2] ?? 20_000)

const plain = {
  'content-type': 'application/json',
  'anthropic-version': '2023-06-01',
  host: '127.0.0.1:8080',
  'content-length': '10200',
  connection: 'keep-alive',
}
const claudeCode = {
  ...plain,
  'user-agent': 'claude-cli/2.1.197 (external, sdk-cli)',
  'x-claude-code-session-id': 'b2a4f1c0-0000-4000-8000-000000000001',
  'x-claude-code-agent-id': 'agent-1',
}
const body = {
  model: 'claude-sonnet-4-5',
  max_tokens: 16,
  system: 'You are a benchmark.',
  messages: [{ role: 'user', content: filler(10_000) }],
}

async function main(): Promise<void> {
  const chains: [string, never[] | undefined][] = [
    ['default chain (claude-code)', undefined],
    ['no plugins', []],
  ]
  for (const [label, plugins] of chains) {
    const host = await loadPlugins({
      home: os.tmpdir(),
      config: { plugins },
      log: silentLogger(),
      watch: false,
    })
    for (const [kind, headers] of [
      ['another client', plain],
      ['Claude Code', claudeCode],
    ] as const) {
      // meta.json sanitizes the headers anyway: the plugins share that memo, so it is not counted.
      const clean = Object.freeze(sanitizeHeaders(headers))
      const times: number[] = []
      for (let round = 0; round < 3; round++) {
        const t0 = performance.now()
        for (let i = 0; i < N; i++) {
          const call = host.begin({
            id: String(i),
            dialect: 'anthropic',
            kind: 'step',
            path: '/v1/messages',
            workspace: 'w',
            agent: 'main',
            body,
            bytes: 10_200,
            headers: () => clean,
          })
          await call.identify()
        }
        times.push(((performance.now() - t0) * 1000) / N)
      }
      console.log(
        `${label}, ${kind}: ${times.map((t) => t.toFixed(2)).join(' / ')} µs per begin + identify (three rounds)`,
      )
    }
    await host.close()
  }
}

void main()
