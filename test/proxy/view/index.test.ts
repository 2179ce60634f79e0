/**
 * view/index over HTTP: the sign-in — a ticket works once and becomes the cookie, nothing is shown
 * without it, a configured token signs the view in while the admin surface still wants its header.
 */
import { makeTicket } from '../../../proxy/view/auth'
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream'
import { rawFetch, startProxy, type Proxy } from '../../support/harness'
import { viewSecretOf } from '../../support/browser'
import { KEY_ENV, keyedRows, recordDemo } from '../../support/view-demo'

let fake: FakeUpstream
let p: Proxy
let secret: string
beforeAll(async () => {
  process.env[KEY_ENV] = 'sk-view'
  fake = await startFakeUpstream()
  p = await startProxy({ fake, config: { providers: keyedRows(fake.anthropicBaseUrl) } })
  await recordDemo(p, 'demo')
  secret = viewSecretOf(p)
})
afterAll(async () => {
  await p.close()
  await fake.close()
})

const get = (path: string, headers: Record<string, string> = {}) =>
  fetch(p.url + path, { headers, redirect: 'manual' })

describe('signing in', () => {
  it('trades a one-time ticket for an HttpOnly SameSite=Strict cookie, and refuses the ticket a second time', async () => {
    const ticket = makeTicket(secret)
    const first = await get(`/ui/w/demo?ticket=${ticket}`)
    expect(first.status).toBe(303)
    expect(first.headers.get('location')).toBe('/ui/w/demo')
    const cookie = first.headers.get('set-cookie') ?? ''
    expect(cookie).toMatch(/HttpOnly; SameSite=Strict/)
    const page = await get('/ui/w/demo', { cookie: cookie.split(';')[0] as string })
    expect(page.status).toBe(200)
    expect(await page.text()).toContain('main.sub-ab12')
    const again = await get(`/ui/w/demo?ticket=${ticket}`)
    expect(again.status).toBe(401)
    expect(again.headers.get('x-holdfast-error')).toBe('VIEW_SIGN_IN')
  })

  it('shows nothing of the records without a sign-in, and says how to get one', async () => {
    const r = await get('/ui/w/demo')
    expect(r.status).toBe(401)
    const body = await r.text()
    expect(body).toContain('holdfast open')
    expect(body).not.toContain('main.sub-ab12')
  })

  it('signs in with a configured token’s ticket while the admin surface still requires its header', async () => {
    const q = await startProxy({ fake, config: { token: 'configured-token' } })
    try {
      expect(
        (await fetch(`${q.url}/ui/?ticket=${makeTicket(viewSecretOf(q))}`, { redirect: 'manual' })).status,
      ).toBe(303)
      const r = await fetch(`${q.url}/ui/?ticket=${makeTicket('configured-token')}`, { redirect: 'manual' })
      const cookie = (r.headers.get('set-cookie') ?? '').split(';')[0] as string
      expect((await fetch(`${q.url}/ui/`, { headers: { cookie } })).status).toBe(200)
      const admin = await rawFetch(`${q.url}/_holdfast/health`, { headers: { cookie } })
      expect(admin.status).toBe(401)
      expect(
        (await fetch(`${q.url}/ui/?ticket=${makeTicket('not-the-token')}`, { redirect: 'manual' })).status,
      ).toBe(401)
    } finally {
      await q.close()
    }
  })
})
