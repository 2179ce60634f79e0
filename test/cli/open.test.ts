/**
 * `holdfast open`: the view's path for what is named, the browser command of the platform, and
 * `--print`: a link with a one-time ticket that signs a browser in once; without a serve it refuses.
 */
import fs from 'node:fs'
import { browserCommand, viewPath } from '../../cli/open'
import { startProxy, tempHome, type Proxy } from '../support/harness'
import { runCli } from './inprocess.support'

let p: Proxy
beforeAll(async () => {
  p = await startProxy()
})
afterAll(() => p.close())

describe('holdfast open', () => {
  it('names the page of a workspace, agent or step, and refuses a bad step number', () => {
    expect(viewPath()).toBe('/ui/')
    expect(viewPath('w')).toBe('/ui/w/w')
    expect(viewPath('w', 'main')).toBe('/ui/w/w/a/main')
    expect(viewPath('w', 'main', '7')).toBe('/ui/w/w/a/main/s/007')
    expect(() => viewPath('w', 'main', 'x')).toThrow('"x" is not a step number')
  })

  it('opens with $BROWSER first, else the platform’s opener', () => {
    expect(browserCommand('linux', { BROWSER: 'firefox' })).toEqual(['firefox'])
    expect(browserCommand('linux', {})).toEqual(['xdg-open'])
    expect(browserCommand('darwin', {})).toEqual(['open'])
  })

  it('prints a link that signs a browser in once', async () => {
    const r = await runCli(['open', 'w', 'main', '--print', '--home', p.home])
    expect(r.code).toBe(0)
    const url = r.stdout.trim()
    expect(url).toMatch(new RegExp(`^${p.url}/ui/w/w/a/main\\?ticket=[\\w.-]+$`))
    const first = await fetch(url, { redirect: 'manual' })
    expect(first.status).toBe(303)
    expect(first.headers.get('set-cookie')).toMatch(/HttpOnly; SameSite=Strict/)
    expect((await fetch(url, { redirect: 'manual' })).status).toBe(401)
  })

  it('refuses when no serve runs on the home', async () => {
    const home = tempHome()
    try {
      const r = await runCli(['open', '--print', '--home', home])
      expect(r.code).toBe(1)
      expect(r.stderr).toMatch(/holdfast serve is not running/)
    } finally {
      fs.rmSync(home, { recursive: true, force: true })
    }
  })
})
