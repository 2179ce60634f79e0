/**
 * The token pictures, as inline SVG (no library: a few rects and paths): a row's stacked bar
 * (cache read, cache write, uncached input, output), and an agent's chart of the same over its steps
 * with the cumulative cost. Pure. Invariant: every series is drawn to one scale per picture, so a
 * cache miss (a long cache-write segment) shows at a glance; a step without usage draws nothing.
 */
import { type Html, markup, raw } from './html'

export interface TokenCounts {
  input: number | null
  cache_read: number | null
  cache_write: number | null
  output: number | null
  cost_usd?: number | null
}

export const SERIES = [
  ['cache_read', 'k-read', 'cache read'],
  ['cache_write', 'k-write', 'cache write'],
  ['input', 'k-input', 'uncached input'],
  ['output', 'k-output', 'output'],
] as const

export const tokensOf = (r: TokenCounts): number =>
  (r.input ?? 0) + (r.cache_read ?? 0) + (r.cache_write ?? 0) + (r.output ?? 0)

const f = (n: number): string => (Math.round(n * 100) / 100).toString()

/** One row's stacked bar, `width` pixels for `max` tokens. */
export function stackedBar(r: TokenCounts, max: number, width = 160): Html {
  let x = 0
  const rects: string[] = []
  for (const [key, cls] of SERIES) {
    const v = r[key] ?? 0
    if (v <= 0 || max <= 0) continue
    const w = Math.max(1, (v / max) * width)
    rects.push(`<rect class="${cls}" x="${f(x)}" y="0" width="${f(w)}" height="10"/>`)
    x += w
  }
  const title = SERIES.map(([key, , label]) => `${label} ${r[key] ?? '-'}`).join(', ')
  return markup`<svg class="bar" width="${width}" height="10" role="img" aria-label="${title}">
    <title>${title}</title>
    ${raw(rects.join(''))}
  </svg>`
}

/** The legend of the series (and the cost line when the chart has one). */
export function legend(withCost: boolean): Html {
  return markup`<div class="legend muted">
    ${SERIES.map(([, cls, label]) => markup`<i class="${cls}"></i>${label}`)}${
      withCost ? markup`<i class="k-cost"></i>cumulative cost` : ''
    }
  </div>`
}

/**
 * The steps the chart's axis labels, at any count: step 1, then every multiple of the smallest
 * 1-2-5 interval that keeps them to `most` labels, and the last step when it is not too close to
 * the one before it.
 */
export function axisTicks(steps: number, most = 8): number[] {
  if (steps < 1) return []
  const build = (every: number): number[] => {
    const ticks = [1]
    for (let k = every; k <= steps; k += every) if (k > 1) ticks.push(k)
    const last = ticks[ticks.length - 1] as number
    if (last !== steps) {
      if (ticks.length > 1 && steps - last < every / 2) ticks[ticks.length - 1] = steps
      else ticks.push(steps)
    }
    return ticks
  }
  for (let decade = 1; ; decade *= 10)
    for (const every of [decade, 2 * decade, 5 * decade]) {
      const ticks = build(every)
      if (ticks.length <= most) return ticks
    }
}

/**
 * An agent's chart: per step a stacked column of its tokens, and the cumulative cost as a line on
 * its own scale. Each series is one path, so a 1000-step chart is a handful of elements.
 */
export function stepsChart(rows: readonly TokenCounts[], width = 960, height = 180): Html {
  const pad = { l: 8, r: 64, t: 8, b: 18 }
  const w = width - pad.l - pad.r
  const h = height - pad.t - pad.b
  const max = Math.max(1, ...rows.map(tokensOf))
  const step = rows.length > 0 ? w / rows.length : w
  const bw = Math.max(0.5, step * 0.8)
  const paths = new Map<string, string[]>(SERIES.map(([, cls]) => [cls, []]))
  let cost = 0
  const costs: number[] = []
  rows.forEach((r, i) => {
    let y = pad.t + h
    const x = pad.l + i * step
    for (const [key, cls] of SERIES) {
      const v = r[key] ?? 0
      if (v <= 0) continue
      const bh = (v / max) * h
      y -= bh
      paths.get(cls)?.push(`M${f(x)} ${f(y)}h${f(bw)}v${f(bh)}h${f(-bw)}z`)
    }
    cost += r.cost_usd ?? 0
    costs.push(cost)
  })
  const maxCost = costs.length ? (costs[costs.length - 1] as number) : 0
  const line =
    maxCost > 0
      ? costs
          .map(
            (c, i) =>
              `${i === 0 ? 'M' : 'L'}${f(pad.l + i * step + bw / 2)} ${f(pad.t + h - (c / maxCost) * h)}`,
          )
          .join('')
      : ''
  const body = [
    ...[...paths].map(([cls, d]) => (d.length ? `<path class="${cls}" d="${d.join('')}"/>` : '')),
    line ? `<path class="k-cost" d="${line}"/>` : '',
    ...axisTicks(rows.length).map(
      (k, i) =>
        `<text class="tick" x="${f(pad.l + (k - 1) * step + bw / 2)}" y="${height - 4}" text-anchor="${i === 0 && rows.length > 1 ? 'start' : 'middle'}">${i === 0 ? `step ${k}` : k}</text>`,
    ),
    `<text x="${width - 4}" y="${pad.t + 10}" text-anchor="end">${max} tok</text>`,
    maxCost > 0
      ? `<text x="${width - 4}" y="${pad.t + 24}" text-anchor="end">$${maxCost.toFixed(2)}</text>`
      : '',
  ].join('')
  return markup`<svg
    class="chart"
    viewBox="0 0 ${width} ${height}"
    role="img"
    aria-label="tokens per step and cumulative cost"
  >
    ${raw(body)}
  </svg>`
}
