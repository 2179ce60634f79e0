/**
 * view/layout: a server page links the hashed assets and its live address; an export inlines them,
 * has one section per page, and carries a content policy as strict as the served pages' header,
 * allowing exactly its inline stylesheet and script by their hashes.
 */
import { createHash } from 'node:crypto'
import { CLIENT_JS, CSS, CSS_NAME, JS_NAME } from '../../../proxy/view/assets'
import { markup } from '../../../proxy/view/html'
import { crumbs, exportDocument, exportSection, serverPage } from '../../../proxy/view/layout'
import { exportLinks, serverLinks } from '../../../proxy/view/links'

describe('the frame of a page', () => {
  it('links the assets on a server, and names the live stream when the page has one', () => {
    const page = serverPage({
      title: 'x<y',
      trail: [{ label: 'ws' }],
      links: serverLinks,
      body: markup`<p>hi</p>`,
      live: '/ui/w/ws/live',
    })
    expect(page).toContain(`href="/ui/assets/${CSS_NAME}"`)
    expect(page).toContain(`src="/ui/assets/${JS_NAME}"`)
    expect(page).toContain('data-live="/ui/w/ws/live"')
    expect(page).toContain('<title>x&lt;y · holdfast</title>')
    expect(serverPage({ title: 't', trail: [], links: serverLinks, body: markup`` })).not.toContain(
      'data-live',
    )
  })

  it('inlines the stylesheet and script in an export, each page a section', () => {
    const doc = exportDocument('ws', 'note', [
      exportSection('/w/ws', { trail: [], links: exportLinks, body: markup`<p>one</p>` }),
    ])
    expect(doc).toContain(CSS)
    expect(doc).toContain('<section class="page" id="/w/ws">')
    expect(doc).not.toContain('/ui/assets/')
  })

  it("carries a Content-Security-Policy meta as strict as the served pages' header, allowing only its own inline stylesheet and script", () => {
    const doc = exportDocument('ws', 'note', [])
    // The attribute as the browser reads it (the markup escapes its quotes).
    const policy = (
      /<meta http-equiv="Content-Security-Policy" content="([^"]+)"/.exec(doc)?.[1] ?? ''
    ).replaceAll('&#39;', "'")
    const hash = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`
    const inline = (tag: string) => new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`).exec(doc)?.[1] ?? ''
    expect(inline('style')).toBe(CSS)
    expect(inline('script')).toBe(CLIENT_JS)
    expect(policy.split('; ')).toEqual([
      "default-src 'none'",
      `script-src ${hash(CLIENT_JS)}`,
      `style-src ${hash(CSS)}`,
      'img-src data:',
      "form-action 'none'",
      "base-uri 'none'",
    ])
    // Before anything it governs: the policy is in force from the first element on.
    expect(doc.indexOf('Content-Security-Policy')).toBeLessThan(doc.indexOf('<style>'))
  })

  it('escapes the breadcrumbs’ names', () => {
    expect(crumbs(serverLinks, [{ label: '<ws>', href: '/ui/w/%3Cws%3E' }]).text).toContain(
      '<a href="/ui/w/%3Cws%3E">&lt;ws&gt;</a>',
    )
  })
})
