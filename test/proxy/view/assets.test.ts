/** view/assets: served under content-hashed names, the script is valid JavaScript, and neither can close its inline element in an export. */
import { ASSETS, CLIENT_JS, CSS, CSS_NAME, JS_NAME } from '../../../proxy/view/assets'

describe('the assets', () => {
  it('are named by a hash of their bytes and typed', () => {
    expect(CSS_NAME).toMatch(/^view-[0-9a-f]{12}\.css$/)
    expect(JS_NAME).toMatch(/^view-[0-9a-f]{12}\.js$/)
    expect(ASSETS.get(CSS_NAME)?.body.toString()).toBe(CSS)
    expect(ASSETS.get(JS_NAME)?.type).toMatch(/^text\/javascript/)
  })

  it('ship a script that parses, and nothing that would end an inline <script> or <style>', () => {
    expect(() => new Function(CLIENT_JS)).not.toThrow()
    expect(CLIENT_JS).not.toMatch(/<\/script/i)
    expect(CSS).not.toMatch(/<\/style/i)
    // Nothing is fetched from outside: no absolute URL in either.
    expect(CLIENT_JS + CSS).not.toMatch(/https?:\/\//)
  })
})
