/**
 * A structural diff of two consecutive requests of an agent, as a person reads a cache miss:
 * messages added (or the transcript rewritten from an index), tools added, removed, edited or
 * reordered, the system text line by line, the model, other top-level fields and request headers.
 * Pure. Invariant: comparisons ignore `cache_control` markers and read a string content as one
 * text block, as the hold does; a system text too long to diff line by line is reported as
 * changed with its sizes, never silently skipped.
 */
import { isObject, type Json, type JsonObject, sameIgnoringCacheControl } from '../core/json'
import type { Dialect } from '../core/dialect'

export interface DiffLine {
  op: 'same' | 'add' | 'del'
  text: string
}

export interface StepDiff {
  model: { from: string; to: string } | null
  messages: { previous: number; current: number; common: number; added: number; rewrittenFrom: number | null }
  tools: {
    previous: number
    current: number
    added: string[]
    removed: string[]
    edited: string[]
    reordered: boolean
  }
  system: { changed: boolean; from: number; to: number; lines: DiffLine[] | null }
  fields: string[]
  headers: { name: string; from: string | null; to: string | null }[]
}

/** Lines compared as a table of at most this many cells; beyond, the system is only said to change. */
const MAX_CELLS = 4_000_000

/** A line diff by longest common subsequence; null when the texts are too long for it. */
export function lineDiff(a: string, b: string): DiffLine[] | null {
  const x = a.split('\n')
  const y = b.split('\n')
  // Common head and tail are kept out of the table.
  let head = 0
  while (head < x.length && head < y.length && x[head] === y[head]) head++
  let tail = 0
  while (
    tail < x.length - head &&
    tail < y.length - head &&
    x[x.length - 1 - tail] === y[y.length - 1 - tail]
  )
    tail++
  const xs = x.slice(head, x.length - tail)
  const ys = y.slice(head, y.length - tail)
  if ((xs.length + 1) * (ys.length + 1) > MAX_CELLS) return null
  const w = ys.length + 1
  const t = new Uint32Array((xs.length + 1) * w)
  for (let i = xs.length - 1; i >= 0; i--)
    for (let j = ys.length - 1; j >= 0; j--)
      t[i * w + j] =
        xs[i] === ys[j]
          ? (t[(i + 1) * w + j + 1] as number) + 1
          : Math.max(t[(i + 1) * w + j] as number, t[i * w + j + 1] as number)
  const mid: DiffLine[] = []
  let i = 0
  let j = 0
  while (i < xs.length || j < ys.length) {
    if (i < xs.length && j < ys.length && xs[i] === ys[j]) {
      mid.push({ op: 'same', text: xs[i] as string })
      i++
      j++
    } else if (
      j < ys.length &&
      (i >= xs.length || (t[i * w + j + 1] as number) >= (t[(i + 1) * w + j] as number))
    ) {
      mid.push({ op: 'add', text: ys[j++] as string })
    } else mid.push({ op: 'del', text: xs[i++] as string })
  }
  return [
    ...x.slice(0, head).map((text) => ({ op: 'same' as const, text })),
    ...mid,
    ...x.slice(x.length - tail).map((text) => ({ op: 'same' as const, text })),
  ]
}

function toolDiff(dialect: Dialect, prev: Json[], cur: Json[]): StepDiff['tools'] {
  const byName = (tools: Json[]): Map<string, Json> => {
    const m = new Map<string, Json>()
    tools.forEach((t, i) => m.set(dialect.toolName(t) ?? `#${i}`, t))
    return m
  }
  const p = byName(prev)
  const c = byName(cur)
  const added = [...c.keys()].filter((n) => !p.has(n))
  const removed = [...p.keys()].filter((n) => !c.has(n))
  const edited = [...c.keys()].filter((n) => p.has(n) && !sameIgnoringCacheControl(p.get(n), c.get(n)))
  const keptP = [...p.keys()].filter((n) => c.has(n))
  const keptC = [...c.keys()].filter((n) => p.has(n))
  return {
    previous: prev.length,
    current: cur.length,
    added,
    removed,
    edited,
    reordered: keptP.some((n, i) => keptC[i] !== n),
  }
}

/** A message with a string content as the one text block it stands for (the cache reads them alike). */
function asBlocks(m: Json): Json {
  if (!isObject(m) || typeof m.content !== 'string') return m
  return { ...m, content: [{ type: 'text', text: m.content }] }
}

const SKIP_FIELDS = new Set(['model', 'tools', 'system', 'instructions'])
const SKIP_HEADERS = new Set(['content-length'])

/** What changed from `prev` to `cur` (both parsed request bodies of one dialect) and their headers. */
export function stepDiff(
  dialect: Dialect,
  prev: JsonObject,
  cur: JsonObject,
  prevHeaders: Readonly<Record<string, string>>,
  curHeaders: Readonly<Record<string, string>>,
): StepDiff {
  const pm = dialect.transcript(prev).map(asBlocks)
  const cm = dialect.transcript(cur).map(asBlocks)
  let common = 0
  while (common < pm.length && common < cm.length && sameIgnoringCacheControl(pm[common], cm[common]))
    common++
  const pModel = typeof prev.model === 'string' ? prev.model : JSON.stringify(prev.model ?? null)
  const cModel = typeof cur.model === 'string' ? cur.model : JSON.stringify(cur.model ?? null)
  const ps = dialect.systemText(prev)
  const cs = dialect.systemText(cur)
  const systemSame = sameIgnoringCacheControl(
    dialect.facets(prev, prevHeaders).system,
    dialect.facets(cur, curHeaders).system,
  )
  const fields = [...new Set([...Object.keys(prev), ...Object.keys(cur)])]
    .filter((k) => !SKIP_FIELDS.has(k) && k !== dialect.transcriptField)
    .filter((k) => !sameIgnoringCacheControl(prev[k], cur[k]))
    .sort()
  const headers = [...new Set([...Object.keys(prevHeaders), ...Object.keys(curHeaders)])]
    .filter((h) => !SKIP_HEADERS.has(h) && prevHeaders[h] !== curHeaders[h])
    .sort()
    .map((name) => ({ name, from: prevHeaders[name] ?? null, to: curHeaders[name] ?? null }))
  return {
    model: pModel === cModel ? null : { from: pModel, to: cModel },
    messages: {
      previous: pm.length,
      current: cm.length,
      common,
      added: cm.length - common,
      rewrittenFrom: common < pm.length ? common : null,
    },
    tools: toolDiff(
      dialect,
      dialect.facets(prev, prevHeaders).tools ?? [],
      dialect.facets(cur, curHeaders).tools ?? [],
    ),
    system: {
      changed: !systemSame,
      from: ps.length,
      to: cs.length,
      lines: systemSame ? null : lineDiff(ps, cs),
    },
    fields,
    headers,
  }
}
