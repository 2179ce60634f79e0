/** view/answer: a refusal page has its code's status from the error table and says how to sign in when that is the refusal; pages carry the security headers. */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { HoldfastError } from '../../../proxy/core/errors'
import { messagePage, PAGE_HEADERS } from '../../../proxy/view/answer'

let server: http.Server
let url: string
beforeAll(async () => {
  server = http.createServer((req, res) =>
    messagePage(res, new HoldfastError(req.url === '/in' ? 'VIEW_SIGN_IN' : 'NOT_FOUND', 'said <here>')),
  )
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(() => new Promise<void>((r) => server.close(() => r())))

describe('a refusal page', () => {
  it('answers with its code’s status and header, the message escaped, sign-in help only for a sign-in', async () => {
    const inn = await fetch(`${url}/in`)
    expect([inn.status, inn.headers.get('x-holdfast-error')]).toEqual([401, 'VIEW_SIGN_IN'])
    const text = await inn.text()
    expect(text).toContain('said &lt;here&gt;')
    expect(text).toContain('holdfast open')
    const missing = await fetch(`${url}/x`)
    expect(missing.status).toBe(404)
    expect(await missing.text()).not.toContain('holdfast open')
    expect(missing.headers.get('content-security-policy')).toBe(PAGE_HEADERS['content-security-policy'])
    expect(missing.headers.get('x-frame-options')).toBe('DENY')
  })
})
