/**
 * The fuzz at scale: `node -r ./scripts/register.js bench/fuzz.ts [count=10000] [seed]`
 * sends the hostile requests of test/support/fuzz.ts to the built `holdfast serve` (`npm run build`
 * first) in front of the fake upstream, and prints: requests tried, crashes (no answer), 5xx, error
 * answers not in an envelope, refused requests that left a workspace on disk, agents bricked
 * afterwards, credentials found in records, and the serve's RSS.
 */
import fs from 'node:fs'
import path from 'node:path'
import { startFakeUpstream } from '../test/support/fake-upstream'
import { generate, inEnvelope, send } from '../test/support/fuzz'
import { rssMb, serveHome } from './procs'

async function main(): Promise<void> {
  const count = Number(process.argv[2] ?? 10_000)
  const seed = Number(process.argv[3] ?? 20261202)
  const fake = await startFakeUpstream()
  const p = await serveHome(fake, { limits: { body_bytes: 4 * 1024 * 1024 } })
  const cases = generate(seed, count)
  const tally = { tried: 0, crashes: 0, fiveXX: 0, bare: 0, leftOnDisk: 0, bricked: 0, leaked: 0 }
  const kinds = new Map<string, number>()
  let next = 0
  const t0 = Date.now()
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (;;) {
        const c = cases[next++]
        if (!c) return
        tally.tried++
        kinds.set(c.kind, (kinds.get(c.kind) ?? 0) + 1)
        try {
          const a = await send(p.url, c)
          if (a.status >= 500) tally.fiveXX++
          if (a.status >= 400 && !inEnvelope(c, a)) tally.bare++
          if (a.status >= 400 && c.workspace && fs.existsSync(path.join(p.home, 'workspaces', c.workspace)))
            tally.leftOnDisk++
        } catch {
          tally.crashes++
        }
      }
    }),
  )
  await p.settled()
  for (const agent of new Set(cases.map((c) => c.agent))) {
    const r = await fetch(`${p.url}/w/fzshared/a/${agent}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({
        model: 'claude-sonnet-4-5',
        max_tokens: 8,
        messages: [{ role: 'user', content: 'ok?' }],
      }),
    })
    await r.arrayBuffer()
    if (r.status !== 200) tally.bricked++
  }
  const grep = (dir: string): number =>
    fs.readdirSync(dir, { withFileTypes: true }).reduce((n, e) => {
      const f = path.join(dir, e.name)
      return (
        n +
        (e.isDirectory()
          ? grep(f)
          : e.name === 'meta.json' && fs.readFileSync(f, 'utf8').includes('fz-secret-')
            ? 1
            : 0)
      )
    }, 0)
  tally.leaked = grep(path.join(p.home, 'workspaces'))
  const rss = rssMb(p.pid)
  console.log(`seed ${seed}: ${tally.tried} requests in ${((Date.now() - t0) / 1000).toFixed(1)} s`)
  console.log(`kinds: ${[...kinds].map(([k, n]) => `${k} ${n}`).join(', ')}`)
  console.log(
    `crashes ${tally.crashes}, 5xx ${tally.fiveXX}, not in an envelope ${tally.bare}, refused but left on disk ${tally.leftOnDisk}, agents bricked ${tally.bricked}, credentials in records ${tally.leaked}, serve RSS ${rss.toFixed(0)} MB`,
  )
  await p.close()
  await fake.close()
}

void main()
