/**
 * Read `--cpu-prof` profiles (what `HOLDFAST_PROFILE_CPU=<dir>` makes bench/profile.ts write): per
 * profile, where its thread's time went per request — self and inclusive µs of the functions that
 * took most, and, for each function named with `--under`, the time spent inside it and what inside
 * it took most. Such a profile samples by wall time: a system call's figure is how long the thread
 * waited in it (preempted included), not CPU; the profiler itself slows everything about twice.
 * Run: `node -r ./scripts/register.js bench/cpuprofile.ts <requests> <file.cpuprofile>… [--under accept,resolve] [--top 25]`
 * (`requests`: what the profiled process served, warm-up included, to divide by). Asserts nothing.
 */
import fs from 'node:fs'
import path from 'node:path'

interface ProfileNode {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number }
  children?: number[]
}
interface Profile {
  nodes: ProfileNode[]
  samples: number[]
  timeDeltas: number[]
}

const NOT_CODE = new Set(['(idle)', '(program)', '(garbage collector)', '(root)'])

const label = (n: ProfileNode): string => {
  const f = n.callFrame
  return `${f.functionName || '(anonymous)'} ${path.basename(f.url) || '(native)'}:${f.lineNumber + 1}`
}

/** µs by sampled node: each sample is billed the time since the one before it. */
function timeByNode(p: Profile): Map<number, number> {
  const t = new Map<number, number>()
  p.samples.forEach((id, i) => t.set(id, (t.get(id) ?? 0) + (p.timeDeltas[i] ?? 0)))
  return t
}

/** Each node's chain of labels, the node first, up to (not including) the root. */
function chains(p: Profile): Map<number, string[]> {
  const byId = new Map(p.nodes.map((n) => [n.id, n]))
  const parent = new Map<number, number>()
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
  const out = new Map<number, string[]>()
  for (const n of p.nodes) {
    const chain: string[] = []
    for (let id: number | undefined = n.id; id !== undefined; id = parent.get(id)) {
      const node = byId.get(id)
      if (!node || node.callFrame.functionName === '(root)') break
      chain.push(label(node))
    }
    out.set(n.id, chain)
  }
  return out
}

const top = (m: Map<string, number>, k: number): [string, number][] =>
  [...m].sort((a, b) => b[1] - a[1]).slice(0, k)

function summarize(file: string, requests: number, under: string[], k: number): string {
  const p = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile
  const times = timeByNode(p)
  const chainOf = chains(p)
  const us = (v: number): string => (v / requests).toFixed(1).padStart(8)
  const special = new Map<string, number>()
  const self = new Map<string, number>()
  const incl = new Map<string, number>()
  const inside = new Map(under.map((u) => [u, { total: 0, incl: new Map<string, number>() }]))
  for (const [id, t] of times) {
    const chain = chainOf.get(id) ?? []
    const head = chain[0] ?? '(root)'
    const name = head.split(' ')[0] as string
    if (NOT_CODE.has(name)) {
      special.set(name, (special.get(name) ?? 0) + t)
      continue
    }
    self.set(head, (self.get(head) ?? 0) + t)
    for (const c of new Set(chain)) incl.set(c, (incl.get(c) ?? 0) + t)
    for (const [u, acc] of inside) {
      // The outermost call of `u` on the stack: what it called, it included.
      const at = chain.findLastIndex((c) => c.split(' ')[0] === u)
      if (at < 0) continue
      acc.total += t
      for (const c of new Set(chain.slice(0, at))) acc.incl.set(c, (acc.incl.get(c) ?? 0) + t)
    }
  }
  const busy = [...self.values()].reduce((a, b) => a + b, 0)
  const lines = [
    `${path.basename(file)}: µs per request (${requests}), wall time: code ${(busy / requests).toFixed(0)}, ${[
      ...special,
    ]
      .map(([n, t]) => `${n} ${(t / requests).toFixed(0)}`)
      .join(', ')}`,
    '  self:',
    ...top(self, k).map(([n, t]) => `  ${us(t)}  ${n}`),
    '  inclusive:',
    ...top(incl, k).map(([n, t]) => `  ${us(t)}  ${n}`),
  ]
  for (const [u, acc] of inside) {
    lines.push(`  inside ${u}: ${(acc.total / requests).toFixed(1)} in all`)
    lines.push(...top(acc.incl, Math.min(k, 12)).map(([n, t]) => `  ${us(t)}  ${n}`))
  }
  return lines.join('\n')
}

function main(): void {
  const args = process.argv.slice(2)
  const opt = (name: string): string | undefined => {
    const i = args.indexOf(name)
    return i < 0 ? undefined : args.splice(i, 2)[1]
  }
  const under = (opt('--under') ?? '').split(',').filter((u) => u !== '')
  const k = Number(opt('--top') ?? 25)
  const [requests, ...files] = args
  if (!requests || !(Number(requests) > 0) || files.length === 0) {
    process.stderr.write(
      'usage: bench/cpuprofile.ts <requests> <file.cpuprofile>… [--under fn,fn] [--top 25]\n',
    )
    process.exit(2)
  }
  for (const f of files) process.stdout.write(`${summarize(f, Number(requests), under, k)}\n`)
}

main()
