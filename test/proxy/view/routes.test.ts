/** view/routes: every route's pattern builds a path that parses back to it; each page's path parses to its route; a name that is not a name is refused before any read; anything else is no page. */
import { LIVE, pathOf, ROUTES, routeOf } from '../../../proxy/view/routes'

describe('routeOf', () => {
  it('names every page, stream, raw file and form', () => {
    expect(routeOf('/')).toEqual({ page: 'root' })
    expect(routeOf('/ui/')).toEqual({ page: 'home' })
    expect(routeOf('/ui/w/caf%C3%A9')).toEqual({ page: 'workspace', ws: 'café', live: false })
    expect(routeOf('/ui/w/ws/live')).toEqual({ page: 'workspace', ws: 'ws', live: true })
    expect(routeOf('/ui/w/ws/a/main.sub-1/live')).toEqual({
      page: 'agent',
      ws: 'ws',
      agent: 'main.sub-1',
      live: true,
    })
    expect(routeOf('/ui/w/ws/a/main/s/007')).toEqual({ page: 'step', ws: 'ws', agent: 'main', n: 7 })
    expect(routeOf('/ui/w/ws/a/main/s/7')).toEqual({ page: 'step', ws: 'ws', agent: 'main', n: 7 })
    expect(routeOf('/ui/w/ws/a/main/s/007/fork')).toEqual({ page: 'fork', ws: 'ws', agent: 'main', n: 7 })
    expect(routeOf('/ui/w/ws/a/main/s/007/raw/response.sse')).toMatchObject({
      page: 'raw',
      file: 'response.sse',
    })
    expect(routeOf('/ui/w/ws/cohort/main@002')).toEqual({
      page: 'cohort',
      ws: 'ws',
      agent: 'main',
      n: 2,
      live: false,
    })
    expect(routeOf('/ui/api/statusline')).toEqual({ page: 'statusline' })
    expect(routeOf('/ui/assets/view-0123.css')).toEqual({ page: 'asset', name: 'view-0123.css' })
  })

  it('is no page for other paths, other raw files, or step 000', () => {
    for (const p of [
      '/ui/x',
      '/ui/w/ws/a/main/s/001/raw/goal.md',
      '/ui/w/ws/a/main/s/000',
      '/ui/assets/../x',
    ])
      expect(routeOf(p)).toBeUndefined()
  })

  it('refuses a name that is not a name (BAD_NAME) before anything reads it', () => {
    expect(() => routeOf('/ui/w/..')).toThrow(expect.objectContaining({ code: 'BAD_NAME' }))
    expect(() => routeOf('/ui/w/ws/a/a%2Fb')).toThrow(expect.objectContaining({ code: 'BAD_NAME' }))
  })
})

describe('pathOf', () => {
  const params = { ws: 'café', agent: 'main.sub-1', n: 12, file: 'request.json', name: 'view-0123.css' }
  it('builds, for every route, a path that routeOf parses back to the same parameters', () => {
    for (const page of Object.keys(ROUTES) as (keyof typeof ROUTES)[]) {
      const path = pathOf(page, params)
      const live = 'live' in ROUTES[page] ? { live: false } : {}
      const names = [...ROUTES[page].pattern.matchAll(/:([a-z]+)/g)].map((m) => m[1] as keyof typeof params)
      const expected = { page, ...Object.fromEntries(names.map((k) => [k, params[k]])), ...live }
      expect(routeOf(path)).toEqual(expected)
      if ('live' in ROUTES[page]) expect(routeOf(path + LIVE)).toEqual({ ...expected, live: true })
    }
  })

  it('encodes a name as one segment, so it parses back as a name or is refused', () => {
    expect(pathOf('agent', { ws: 'café', agent: 'a/b?' })).toBe('/ui/w/caf%C3%A9/a/a%2Fb%3F')
    expect(() => routeOf(pathOf('agent', { ws: 'ws', agent: 'a/b' }))).toThrow(
      expect.objectContaining({ code: 'BAD_NAME' }),
    )
  })
})
