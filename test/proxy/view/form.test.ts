/** view/form: a posted form is read as URL-encoded fields; another content type or an oversized body is refused. */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { readForm } from '../../../proxy/view/form'

let server: http.Server
let url: string
beforeAll(async () => {
  server = http.createServer((req, res) => {
    readForm(req, 64).then(
      (f) => res.end(JSON.stringify({ roles: f.getAll('role'), goal: f.get('goal') })),
      (err: { code?: string }) => res.end(JSON.stringify({ refused: err.code })),
    )
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
})
afterAll(() => new Promise<void>((r) => server.close(() => r())))

const post = async (body: string, type: string) =>
  (await fetch(url, { method: 'POST', headers: { 'content-type': type }, body })).json()

describe('readForm', () => {
  it('reads repeated and encoded fields', async () => {
    expect(await post('role=a&role=b&goal=fix+the+%3Cbug%3E', 'application/x-www-form-urlencoded')).toEqual({
      roles: ['a', 'b'],
      goal: 'fix the <bug>',
    })
  })

  it('refuses another content type and a body over the limit', async () => {
    expect(await post('{"role":"a"}', 'application/json')).toEqual({ refused: 'VIEW_FORM_INVALID' })
    expect(await post(`goal=${'x'.repeat(100)}`, 'application/x-www-form-urlencoded')).toEqual({
      refused: 'BODY_TOO_LARGE',
    })
  })
})
