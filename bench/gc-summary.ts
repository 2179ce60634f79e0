/**
 * Sum up a `--trace-gc-nvp` log: per isolate (each thread of each process: `[pid:isolate]`), its
 * scavenges (how many, their pauses in all and on average, the helpers' time, and per scavenge what
 * was allocated since the one before, what survived and what was promoted) and its full
 * collections. Make the log with bench/profile.ts: `HOLDFAST_NODE_ARGS=--trace-gc-nvp
 * HOLDFAST_BARE_NODE_ARGS=--trace-gc-nvp HOLDFAST_BENCH_STDOUT=<file> node -r ./scripts/register.js
 * bench/profile.ts 2000 1`, then `node -r ./scripts/register.js bench/gc-summary.ts <file>`.
 * Asserts nothing.
 */
import fs from 'node:fs'

interface Totals {
  scavenges: number
  scavengeMs: number
  helpersMs: number
  allocated: number
  survived: number
  promoted: number
  full: number
  fullMs: number
}

const file = process.argv[2]
if (!file) {
  process.stderr.write('usage: bench/gc-summary.ts <--trace-gc-nvp log>\n')
  process.exit(2)
}

const byIsolate = new Map<string, Totals>()
for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
  const isolate = /^\[(\d+:0x[0-9a-f]+)\]/.exec(line)?.[1]
  if (!isolate || !line.includes(' gc=')) continue
  const f = new Map(
    line
      .split(/\s+/)
      .filter((kv) => kv.includes('='))
      .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
  )
  const n = (k: string): number => Number(f.get(k) ?? 0)
  let t = byIsolate.get(isolate)
  if (!t) {
    t = {
      scavenges: 0,
      scavengeMs: 0,
      helpersMs: 0,
      allocated: 0,
      survived: 0,
      promoted: 0,
      full: 0,
      fullMs: 0,
    }
    byIsolate.set(isolate, t)
  }
  if (f.get('gc') === 's') {
    t.scavenges++
    t.scavengeMs += n('pause')
    t.helpersMs += n('background.scavenge.parallel')
    t.allocated += n('allocated')
    t.survived += n('new_space_survived')
    t.promoted += n('promoted')
  } else {
    t.full++
    t.fullMs += n('pause')
  }
}

for (const [isolate, t] of byIsolate) {
  const per = (bytes: number): string => (bytes / Math.max(1, t.scavenges) / 1024).toFixed(0)
  process.stdout.write(
    `${isolate}: ${t.scavenges} scavenges, ${t.scavengeMs.toFixed(0)} ms of pauses (${(t.scavengeMs / Math.max(1, t.scavenges)).toFixed(2)} on average), ` +
      `${t.helpersMs.toFixed(0)} ms on helpers; per scavenge ${per(t.allocated)} KB allocated, ${per(t.survived)} KB survived, ${per(t.promoted)} KB promoted; ` +
      `${t.full} full collections, ${t.fullMs.toFixed(0)} ms of pauses\n`,
  )
}
