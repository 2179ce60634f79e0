/**
 * view/handlers over HTTP (the browser tests drive the same pages in chromium): `GET /` as HTML
 * leads to /ui/, no CORS and no foreign origin, the pages' security headers, raw files as recorded,
 * and the Fork form refused without its anti-forgery value, from another origin or naming no role,
 * firing nothing.
 */
import { listRefs, readRef } from '../../../proxy/store/git/refs'
import { openRepo } from '../../../proxy/store/git'
import { formValue } from '../../../proxy/view/auth'
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream'
import { gitBytes, startProxy, type Proxy } from '../../support/harness'
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

describe('what the view answers', () => {
  it('leads GET / asked for as HTML to /ui/, and leaves any other GET / as no endpoint', async () => {
    const html = await get('/', { accept: 'text/html,application/xhtml+xml' })
    expect([html.status, html.headers.get('location')]).toEqual([303, '/ui/'])
    const json = await get('/', { accept: 'application/json' })
    expect([json.status, json.headers.get('x-holdfast-error')]).toEqual([404, 'NOT_FOUND'])
  })

  it('sends no CORS header and refuses a request from another origin', async () => {
    const r = await get('/ui/', { 'x-holdfast-token': secret, origin: 'http://127.0.0.1:1' })
    expect(r.status).toBe(403)
    expect(r.headers.get('x-holdfast-error')).toBe('VIEW_REFUSED')
    const ok = await get('/ui/', { 'x-holdfast-token': secret })
    expect(ok.status).toBe(200)
    expect(ok.headers.get('access-control-allow-origin')).toBeNull()
  })

  it('serves pages with a strict content policy, no framing, and a referrer policy that keeps the Origin of its forms', async () => {
    const r = await get('/ui/w/demo/a/main/s/003', { 'x-holdfast-token': secret })
    expect(r.headers.get('content-security-policy')).toMatch(
      /default-src 'none'; script-src 'self'.*frame-ancestors 'none'/,
    )
    expect(r.headers.get('x-frame-options')).toBe('DENY')
    // no-referrer made Chromium send `Origin: null` with the Fork form, which was then refused.
    expect(r.headers.get('referrer-policy')).toBe('same-origin')
    expect(r.headers.get('cache-control')).toBe('no-store')
  })

  it('serves a step’s raw request as the bytes git holds', async () => {
    const r = await get('/ui/w/demo/a/main/s/002/raw/request.json', { 'x-holdfast-token': secret })
    expect(Buffer.from(await r.arrayBuffer())).toEqual(
      gitBytes(p.repo('demo'), 'show', 'agents/main:steps/main/002/request.json'),
    )
    expect((await get('/ui/w/demo/a/main/s/099', { 'x-holdfast-token': secret })).status).toBe(404)
    expect((await get('/ui/w/nowhere', { 'x-holdfast-token': secret })).status).toBe(404)
  })
})

describe('the Fork from here form', () => {
  const action = '/ui/w/demo/a/main/s/003/fork'
  const post = (fields: [string, string][], origin = p.url) =>
    fetch(p.url + action, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'x-holdfast-token': secret, origin, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields),
    })

  it('is refused without a valid anti-forgery value, from another origin, or naming no role, and fires nothing', async () => {
    const repo = openRepo(p.repo('demo'))
    const before = (await listRefs(repo, 'refs/heads/agents/')).length
    const forged = await post([
      ['form', 'forged'],
      ['role', 'reviewer'],
      ['goal', 'x'],
    ])
    expect([forged.status, forged.headers.get('x-holdfast-error')]).toEqual([403, 'VIEW_REFUSED'])
    const elsewhere = await post(
      [
        ['form', formValue(secret, action)],
        ['role', 'reviewer'],
        ['goal', 'x'],
      ],
      'http://127.0.0.1:1',
    )
    expect(elsewhere.status).toBe(403)
    const noRole = await post([
      ['form', formValue(secret, action)],
      ['goal', 'x'],
    ])
    expect(noRole.status).toBe(400)
    expect(await noRole.text()).toContain('check at least one role')
    expect((await listRefs(repo, 'refs/heads/agents/')).length).toBe(before)
    expect(await readRef(repo, 'refs/heads/agents/main')).toBeDefined()
  })
})
