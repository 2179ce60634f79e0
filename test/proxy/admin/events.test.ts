/**
 * proxy/admin/events: `POST /_holdfast/events/refs` on a running server with a captured log.
 * Rules: a well-formed event (`refs` of `{ref, old, new}` strings, an optional string `workspace`)
 * is answered 204 with no body and logged at debug, nothing more; a malformed one is BAD_REQUEST
 * naming the field; a body over 64 KiB is BODY_TOO_LARGE; any other method or events path is
 * NOT_FOUND. (Origin refusal and the hook's own events: test/hooks/reference-transaction.follow.)
 */
import { startProxy, type Proxy } from '../../support/harness'
import { captureLog } from '../../hooks/helpers'

let p: Proxy
let capture: ReturnType<typeof captureLog>

beforeAll(async () => {
  capture = captureLog()
  p = await startProxy({ log: capture.log })
})
afterAll(() => p.close())

const post = (body: string, path = '/_holdfast/events/refs') =>
  fetch(`${p.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
const events = () => capture.entries().filter((e) => e.msg === 'hook event: refs moved')
const errorOf = async (r: Response) =>
  ((await r.json()) as { error: { code: string; message: string } }).error

describe('POST /_holdfast/events/refs', () => {
  it('answers 204 with no body and logs the event at debug, workspace and refs as sent', async () => {
    const refs = [
      { ref: 'refs/heads/config/default', old: '0'.repeat(40), new: 'a'.repeat(40) },
      { ref: 'refs/heads/config/other', old: 'b'.repeat(40), new: '0'.repeat(40) },
    ]
    const r = await post(JSON.stringify({ workspace: 'proj', refs }))
    expect([r.status, await r.text()]).toEqual([204, ''])
    const noWs = await post(JSON.stringify({ refs: [] }))
    expect(noWs.status).toBe(204)
    expect(events().map((e) => [e.level, e.workspace, e.refs])).toEqual([
      [20, 'proj', refs],
      [20, undefined, []],
    ])
  })

  it('refuses a malformed event as BAD_REQUEST naming the field, and logs nothing', async () => {
    const before = events().length
    const cases: [unknown, string][] = [
      [{}, 'field "refs" must be an array of {ref, old, new} strings'],
      [{ refs: {} }, 'field "refs" must be an array of {ref, old, new} strings'],
      [
        { refs: [{ ref: 'r', old: 'a', new: 1 }] },
        'field "refs" must be an array of {ref, old, new} strings',
      ],
      [{ refs: ['refs/heads/x'] }, 'field "refs" must be an array of {ref, old, new} strings'],
      [{ workspace: 3, refs: [] }, 'field "workspace" must be a string'],
      [{ workspace: null, refs: [] }, 'field "workspace" must be a string'],
    ]
    for (const [body, message] of cases) {
      const r = await post(JSON.stringify(body))
      expect([r.status, await errorOf(r)]).toEqual([400, { code: 'BAD_REQUEST', message }])
    }
    expect(events()).toHaveLength(before)
  })

  it('refuses a body over 64 KiB as BODY_TOO_LARGE', async () => {
    const refs = Array.from({ length: 700 }, (_, i) => ({
      ref: `refs/heads/config/c${i}`,
      old: 'a'.repeat(40),
      new: 'b'.repeat(40),
    }))
    const body = JSON.stringify({ refs })
    expect(Buffer.byteLength(body)).toBeGreaterThan(64 * 1024)
    const r = await post(body)
    expect([r.status, await errorOf(r)]).toEqual([
      413,
      { code: 'BODY_TOO_LARGE', message: 'an admin request body is limited to 65536 bytes' },
    ])
  })

  it('answers any other method or events path NOT_FOUND', async () => {
    const get = await fetch(`${p.url}/_holdfast/events/refs`)
    const other = await post('{"refs":[]}', '/_holdfast/events/commits')
    expect([get.status, (await errorOf(get)).message]).toEqual([
      404,
      'no such admin endpoint: GET /_holdfast/events/refs',
    ])
    expect([other.status, (await errorOf(other)).message]).toEqual([
      404,
      'no such admin endpoint: POST /_holdfast/events/commits',
    ])
  })
})
