/**
 * The cost of telemetry (docs/telemetry.md): the same sequential steps through two serves, one
 * without an OTLP endpoint and one exporting every step to a loopback receiver
 * (test/support/otlp-receiver.ts, protobuf), taking turns in rounds; CPU per step of each serve
 * (all its threads, commits included) and added p50 against the fake. Nothing is asserted: the
 * figures go to docs/benchmarks.md. `node -r ./scripts/register.js bench/telemetry.ts [steps]
 * [--hang]` after `npm run build`; `--hang`: a receiver that never answers.
 */
import http from 'node:http'
import { startOtlpReceiver } from '../test/support/otlp-receiver'
import { cpuMs, filler, pct, postJson, requestBody, serveHome, startFake, type Proc } from './procs'

const STEPS = Number(process.argv[2] ?? 400)
/** `--hang`: the receiver takes every export and never answers (a backend that hangs). */
const HANG = process.argv.includes('--hang')
const ROUNDS = 4

async function main(): Promise<void> {
  const fake: Proc = await startFake()
  const up = { anthropicBaseUrl: fake.url, openaiBaseUrl: `${fake.url}/v1` }
  const receiver = await startOtlpReceiver()
  receiver.hang = HANG
  const off = await serveHome(up)
  const on = await serveHome(
    up,
    {},
    { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '200' },
  )
  const agent = new http.Agent({ keepAlive: true, maxSockets: 4 })
  const text = filler(10_000)
  const cpu = { off: 0, on: 0 }
  const ms: { off: number[]; on: number[]; direct: number[] } = { off: [], on: [], direct: [] }
  try {
    let i = 0
    for (let r = 0; r < ROUNDS + 1; r++) {
      for (const [name, served] of [
        ['off', off],
        ['on', on],
      ] as const) {
        const before = cpuMs(served.pid)
        for (let k = 0; k < STEPS / ROUNDS; k++) {
          const t = await postJson(agent, `${served.url}/w/bench/a/a${r}/v1/messages`, requestBody(i++, text))
          if (r > 0) ms[name].push(t)
        }
        await served.settled()
        if (r > 0) cpu[name] += cpuMs(served.pid) - before
      }
      for (let k = 0; k < STEPS / ROUNDS; k++) {
        const t = await postJson(agent, `${fake.url}/v1/messages`, requestBody(i++, text))
        if (r > 0) ms.direct.push(t)
      }
    }
    if (!HANG)
      await receiver.waitForSpans(Math.floor(STEPS * (1 + 1 / ROUNDS)) - 1, 30_000).catch(() => undefined)
    const d = pct(ms.direct, 50)
    const f = (n: number): string => n.toFixed(2)
    process.stdout.write(
      [
        `| telemetry, ${STEPS} sequential 10 KB steps | without an endpoint | exporting every step (OTLP protobuf, loopback${HANG ? ', a receiver that never answers' : ''}) | on / off |`,
        '| --- | --- | --- | --- |',
        `| CPU per step, ms (serve, all threads) | ${f(cpu.off / STEPS)} | ${f(cpu.on / STEPS)} | ${(cpu.on / cpu.off).toFixed(2)}× |`,
        `| added p50 over direct, ms | ${f(pct(ms.off, 50) - d)} | ${f(pct(ms.on, 50) - d)} | ${f(pct(ms.on, 50) - pct(ms.off, 50))} ms |`,
        HANG
          ? `| exports the receiver took and never answered | - | ${receiver.requests} | |`
          : `| spans the receiver took | - | ${receiver.spans().length} | |`,
      ].join('\n') + '\n',
    )
  } finally {
    agent.destroy()
    await on.close()
    await off.close()
    await receiver.close()
    fake.child.kill('SIGTERM')
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
