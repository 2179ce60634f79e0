/** view/links: a page's URL on a server and its fragment in an export name the same path; names are one encoded segment. */
import { exportLinks, paths, sectionId, serverLinks } from '../../../proxy/view/links'

describe('links', () => {
  it('put every page under /ui/ on a server and behind # in an export', () => {
    expect(serverLinks.step('w', 'main', 7)).toBe('/ui/w/w/a/main/s/007')
    expect(exportLinks.step('w', 'main', 7)).toBe('#/w/w/a/main/s/007')
    expect(serverLinks.cohort('w', 'main', 2)).toBe('/ui/w/w/cohort/main@002')
    expect(serverLinks.raw('w', 'a', 1, 'request.json')).toBe('/ui/w/w/a/a/s/001/raw/request.json')
    expect(exportLinks.raw('w', 'a', 1, 'request.json')).toBeUndefined()
  })

  it('encode a name as one segment, and an export section’s id is its fragment decoded', () => {
    expect(paths.agent('café', 'a/b?')).toBe('/w/caf%C3%A9/a/a%2Fb%3F')
    expect(sectionId(exportLinks.agent('my ws', 'é'))).toBe('/w/my ws/a/é')
  })
})
