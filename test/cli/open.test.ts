/**
 * `holdfast open`: the view's path for what is named, the browser command of the platform, and
 * `--print`: a link with a one-time ticket that signs a browser in once; without a serve it refuses;
 * it says "opened" only when the opener did not fail, and otherwise prints the link and why.
 */
import fs from 'node:fs'
import path from 'node:path'
import { browserCommand, noDisplay, viewPath } from '../../cli/open'
import { startProxy, tempHome, type Proxy } from '../support/harness'
import { runCli } from './inprocess.support'

let p: Proxy
/** Run `f` with these variables set in this process's environment (the in-process CLI reads it). */
async function withEnv<T>(vars: Record<string, string>, f: () => Promise<T>): Promise<T> {
  const before = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]))
  Object.assign(process.env, vars)
  try {
    return await f()
  } finally {
    for (const [k, v] of Object.entries(before))
      if (v === undefined) delete process.env[k]
      else process.env[k] = v
  }
}
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

  it('says it opened the browser only when the opener ran and exited 0, and the opener got the link', async () => {
    const dir = tempHome()
    const got = path.join(dir, 'got')
    const opener = path.join(dir, 'opener.sh')
    fs.writeFileSync(opener, `#!/bin/sh\nprintf %s "$1" > '${got}'\n`, { mode: 0o755 })
    try {
      const r = await withEnv({ BROWSER: opener }, () => runCli(['open', 'w', '--home', p.home]))
      expect(r.code).toBe(0)
      expect(r.stdout).toBe(`opened ${p.url}/ui/w/w in the browser (the link signs it in once)\n`)
      expect(fs.readFileSync(got, 'utf8')).toMatch(new RegExp(`^${p.url}/ui/w/w\\?ticket=`))
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  it('prints the link and why when the opener fails, and the link still signs a browser in', async () => {
    const r = await withEnv({ BROWSER: '/bin/false' }, () => runCli(['open', 'w', '--home', p.home]))
    expect(r.code).toBe(0)
    const [line, hint, url] = r.stdout.trim().split('\n')
    expect(line).toBe('no browser opened: the opener /bin/false failed (exit 1)')
    expect(hint).toBe('open this link (valid two minutes, once):')
    expect((await fetch(url as string, { redirect: 'manual' })).status).toBe(303)
  })

  it('prints the link and why when the opener does not exist', async () => {
    const r = await withEnv({ BROWSER: '/nonexistent/browser' }, () => runCli(['open', '--home', p.home]))
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(
      /^no browser opened: the opener \/nonexistent\/browser could not start \(ENOENT\)\n/,
    )
    expect(r.stdout).toMatch(/\?ticket=/)
  })

  it('knows Linux with no display and no BROWSER cannot open a browser', () => {
    expect(noDisplay('linux', {})).toMatch(/no display is reachable/)
    expect(noDisplay('linux', { DISPLAY: ':0' })).toBeUndefined()
    expect(noDisplay('linux', { WAYLAND_DISPLAY: 'wayland-0' })).toBeUndefined()
    expect(noDisplay('linux', { BROWSER: 'w3m' })).toBeUndefined()
    expect(noDisplay('darwin', {})).toBeUndefined()
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
