/**
 * view/table: every page row's pattern is its route's; the link the row's pages are reached by
 * parses back (routeOf) to the row and its parameters, and a live row's stream to the same with
 * `live`; a name that is not a name is refused; a path that names no page is undefined. The rows'
 * trails and bodies read nothing (they render the data they are given).
 */
import { exportLinks, serverLinks } from '../../../proxy/view/links'
import { LIVE, ROUTES, routeOf } from '../../../proxy/view/routes'
import { PAGES, type PageName } from '../../../proxy/view/table'

const ws = 'café'
const agent = 'main.sub-1'
const n = 12
const linkOf: { [K in PageName]: () => [string, object] } = {
  home: () => [serverLinks.home(), {}],
  workspace: () => [serverLinks.workspace(ws), { ws }],
  agent: () => [serverLinks.agent(ws, agent), { ws, agent }],
  step: () => [serverLinks.step(ws, agent, n), { ws, agent, n }],
  cohort: () => [serverLinks.cohort(ws, agent, n), { ws, agent, n }],
}

describe('the page table', () => {
  it('has one row per page, each with its route’s pattern, and a stream exactly where the route is live', () => {
    for (const name of Object.keys(PAGES) as PageName[]) {
      const row = PAGES[name]
      expect([row.name, row.pattern]).toEqual([name, ROUTES[name].pattern])
      expect(row.live !== undefined).toBe('live' in ROUTES[name])
    }
  })

  it('parses every row’s link back to the row and its parameters (and a live row’s stream)', () => {
    for (const name of Object.keys(PAGES) as PageName[]) {
      const [href, params] = linkOf[name]()
      const live = 'live' in ROUTES[name]
      expect(routeOf(href)).toEqual({ page: name, ...params, ...(live ? { live: false } : {}) })
      if (live) expect(routeOf(href + LIVE)).toEqual({ page: name, ...params, live: true })
    }
  })

  it('refuses a name that is not a name, and is no page for an unknown path', () => {
    for (const p of ['/ui/w/..', '/ui/w/ws/a/a%2Fb', '/ui/w/ws/cohort/..@002', '/ui/w/a%20b/a/main/s/001'])
      expect(() => routeOf(p)).toThrow(expect.objectContaining({ code: 'BAD_NAME' }))
    for (const p of ['/ui/x', '/ui/w/ws/a/main/s/000', '/ui/w/ws/a/main/x', '/ui/w/ws/cohort/main'])
      expect(routeOf(p)).toBeUndefined()
  })

  it('renders trails and bodies from data alone, with the page’s stream address', () => {
    const d = { ws: 'w', agent: 'a', rows: [], tools: [] }
    expect(PAGES.agent.crumbs(d, serverLinks)).toEqual([{ label: 'w', href: '/ui/w/w' }, { label: 'a' }])
    expect(PAGES.agent.title(d)).toBe('a · w')
    expect(PAGES.agent.live?.(d, serverLinks)).toBe('/ui/w/w/a/a/live?after=0&max=1')
    expect(PAGES.agent.body(d, exportLinks).text).toContain('Agent a')
    const c = {
      ws: 'w',
      agent: 'a',
      n: 2,
      report: { notch: 'f'.repeat(40), members: [] },
      refusals: ['x: refused: no'],
    }
    expect(PAGES.cohort.crumbs(c, exportLinks)).toEqual([
      { label: 'w', href: '#/w/w' },
      { label: 'a', href: '#/w/w/a/a' },
      { label: 'cohort @002' },
    ])
    expect(PAGES.cohort.body(c, serverLinks).text).toContain(
      '<div class="notice"><p>x: refused: no</p></div>',
    )
    expect(PAGES.home.crumbs([], serverLinks)).toEqual([])
  })
})
