/**
 * What a V8 heap snapshot holds: self sizes summed by kind (strings, arrays, each constructor,
 * native ArrayBuffer backing stores), and for the largest objects a path of retainers back towards
 * a root (who keeps them). Run: `node -r ./scripts/register.js bench/snapshot-summary.ts
 * <file.heapsnapshot> [largest=15] [depth=8]`. Snapshots come from bench/snapshot-preload.ts. Asserts nothing.
 */
import fs from 'node:fs'

interface Snapshot {
  snapshot: {
    meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] }
  }
  nodes: number[]
  edges: number[]
  strings: string[]
}

function main(): void {
  const file = process.argv[2]
  if (!file) throw new Error('usage: snapshot-summary.ts <file.heapsnapshot> [largest]')
  const largest = Number(process.argv[3] ?? 15)
  const deep = Number(process.argv[4] ?? 8)
  const s = JSON.parse(fs.readFileSync(file, 'utf8')) as Snapshot
  const nf = s.snapshot.meta.node_fields
  const ef = s.snapshot.meta.edge_fields
  const nodeTypes = s.snapshot.meta.node_types[0]
  const edgeTypes = s.snapshot.meta.edge_types[0]
  const N = nf.length
  const E = ef.length
  const [T, NAME, SIZE, EDGES] = ['type', 'name', 'self_size', 'edge_count'].map((k) => nf.indexOf(k)) as [
    number,
    number,
    number,
    number,
  ]
  const [ET, ENAME, ETO] = ['type', 'name_or_index', 'to_node'].map((k) => ef.indexOf(k)) as [
    number,
    number,
    number,
  ]
  const count = s.nodes.length / N
  const firstEdge = new Uint32Array(count + 1)
  for (let i = 0; i < count; i++)
    firstEdge[i + 1] = (firstEdge[i] as number) + (s.nodes[i * N + EDGES] as number)
  // One retainer per node (the first strong edge met), for the paths.
  const retainer = new Int32Array(count).fill(-1)
  const via = new Array<string>(count)
  for (let i = 0; i < count; i++) {
    for (let e = firstEdge[i] as number; e < (firstEdge[i + 1] as number); e++) {
      const type = edgeTypes[s.edges[e * E + ET] as number]
      if (type === 'weak' || type === 'shortcut') continue
      const to = (s.edges[e * E + ETO] as number) / N
      if (retainer[to] !== -1) continue
      retainer[to] = i
      const name = s.edges[e * E + ENAME] as number
      via[to] = type === 'element' || type === 'hidden' ? `[${name}]` : String(s.strings[name])
    }
  }
  const label = (i: number): string => {
    const type = nodeTypes[s.nodes[i * N + T] as number] as string
    const name = s.strings[s.nodes[i * N + NAME] as number] ?? ''
    if (type === 'string' || type === 'concatenated string' || type === 'sliced string') return type
    if (type === 'object' || type === 'native' || type === 'closure') return `${type} ${name.slice(0, 60)}`
    return `(${type})`
  }
  const bySite = new Map<string, { bytes: number; n: number }>()
  let total = 0
  const sizes: [number, number][] = []
  for (let i = 0; i < count; i++) {
    const size = s.nodes[i * N + SIZE] as number
    total += size
    const k = label(i)
    const b = bySite.get(k) ?? { bytes: 0, n: 0 }
    b.bytes += size
    b.n++
    bySite.set(k, b)
    if (size >= 65536) sizes.push([size, i])
  }
  const mb = (n: number): string => (n / 1048576).toFixed(1)
  console.log(`${file}: ${count} objects, ${mb(total)} MB (self sizes)`)
  for (const [k, v] of [...bySite].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, 20))
    console.log(`  ${mb(v.bytes)} MB in ${v.n} × ${k}`)
  console.log(`the ${largest} largest objects, with a path of retainers:`)
  for (const [size, i] of sizes.sort((a, b) => b[0] - a[0]).slice(0, largest)) {
    const path: string[] = []
    let at = i
    for (let depth = 0; depth < deep && retainer[at] !== -1; depth++) {
      path.push(`${via[at]} ← ${label(retainer[at] as number)}`)
      at = retainer[at] as number
    }
    console.log(`  ${mb(size)} MB ${label(i)}: ${path.join(' / ')}`)
  }
}

main()
