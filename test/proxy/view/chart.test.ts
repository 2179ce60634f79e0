/** view/chart: bars and chart draw every series to one scale; a step without usage draws nothing; a long agent stays a handful of elements. */
import { axisTicks, legend, stackedBar, stepsChart, tokensOf } from '../../../proxy/view/chart'

const row = (cache_read: number, cache_write: number, input = 0, output = 10, cost_usd = 0.01) => ({
  input,
  cache_read,
  cache_write,
  output,
  cost_usd,
})

describe('a row’s bar', () => {
  it('draws cache read, cache write, input and output to the agent’s scale', () => {
    const svg = stackedBar(row(900, 90), 1000, 100).text
    expect(svg).toContain('<rect class="k-read" x="0" y="0" width="90" height="10"/>')
    expect(svg).toContain('<rect class="k-write" x="90" y="0" width="9"')
    expect(svg).not.toContain('k-input')
    expect(svg).toContain('<title>cache read 900, cache write 90, uncached input 0, output 10</title>')
  })

  it('draws nothing for a step without usage', () => {
    expect(
      stackedBar({ input: null, cache_read: null, cache_write: null, output: null }, 1000).text,
    ).not.toContain('<rect')
  })
})

describe('an agent’s chart', () => {
  it('is one path per series and one cost line, however many steps', () => {
    const rows = Array.from({ length: 1000 }, (_, i) => row(i * 10, i % 7 === 0 ? 5000 : 10))
    const svg = stepsChart(rows).text
    expect(svg.match(/<path /g)).toHaveLength(4) // read, write, output, cost (no uncached input)
    const labels = [...svg.matchAll(/<text class="tick"[^>]*>([^<]*)<\/text>/g)].map((m) => m[1])
    expect(labels).toEqual(['step 1', '200', '400', '600', '800', '1000'])
    expect(svg).toContain(`${Math.max(...rows.map(tokensOf))} tok`)
    expect(svg).toContain('$10.00')
  })

  it('labels its axis at 1-2-5 steps, never more than eight labels, the first and last step always', () => {
    expect(axisTicks(0)).toEqual([])
    expect(axisTicks(1)).toEqual([1])
    expect(axisTicks(7)).toEqual([1, 2, 3, 4, 5, 6, 7])
    expect(axisTicks(12)).toEqual([1, 2, 4, 6, 8, 10, 12])
    expect(axisTicks(13)).toEqual([1, 2, 4, 6, 8, 10, 12, 13])
    expect(axisTicks(150)).toEqual([1, 50, 100, 150])
    expect(axisTicks(1001)).toEqual([1, 200, 400, 600, 800, 1001])
    for (let n = 1; n <= 5000; n += 37) {
      const t = axisTicks(n)
      expect(t.length).toBeLessThanOrEqual(8)
      expect([t[0], t[t.length - 1]]).toEqual([1, n])
    }
  })

  it('says the series in its legend', () => {
    expect(legend(true).text).toContain('cumulative cost')
    expect(legend(false).text).not.toContain('cumulative cost')
  })
})
