/**
 * view/live: a stream renders on connect and again when a step of its page is committed (the
 * server context's channel), not for another home or another page; events arriving during a render
 * fold into one more; a closed stream unsubscribes.
 */
import { hasSubscribers } from 'node:diagnostics_channel'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { stepCommitted } from '../../../proxy/live/context'
import { liveStream } from '../../../proxy/view/live'
import { eventually } from '../../support/harness'

let server: http.Server
let url: string
let renders = 0
beforeAll(async () => {
  server = http.createServer((req, res) =>
    liveStream(
      '/home/a',
      req,
      res,
      (e) => e.agent === 'main',
      async () => ({ replace: { x: `render ${++renders}` } }),
      () => undefined,
    ),
  )
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
})
afterAll(() => new Promise<void>((r) => server.close(() => r())))

describe('a live stream', () => {
  it('sends the page’s regions on connect and after each commit it wants, and unsubscribes when closed', async () => {
    let text = ''
    const req = http.get(url)
    const res = await new Promise<http.IncomingMessage>((r) => req.once('response', r))
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/)
    res.setEncoding('utf8')
    res.on('data', (c: string) => (text += c))
    await eventually(() => text.includes('render 1'), 10_000, 'the first render')
    stepCommitted.publish({ home: '/home/b', ws: 'w', agent: 'main', n: 1 })
    stepCommitted.publish({ home: '/home/a', ws: 'w', agent: 'other', n: 1 })
    stepCommitted.publish({ home: '/home/a', ws: 'w', agent: 'main', n: 2 })
    await eventually(() => text.includes('render 2'), 10_000, 'the render of the commit')
    expect(text).toContain('event: regions\ndata: {"replace":{"x":"render 2"}}\n\n')
    expect(renders).toBe(2)
    req.destroy()
    await eventually(() => !hasSubscribers('holdfast.step.committed'), 10_000, 'the unsubscription')
  })
})
