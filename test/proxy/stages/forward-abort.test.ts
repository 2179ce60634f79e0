/**
 * stages/forward-abort: one signal for the provider call, aborted by the client going away before
 * its answer is finished or by shutdown, the first cause kept; a cause already there is the cut at
 * once; dispose removes every listener. Driven on a fake client side (an emitter), no socket.
 */
import { EventEmitter } from 'node:events'
import { forwardAbort } from '../../../proxy/stages/forward-abort'

/** The client side as the wiring sees it. */
class Client extends EventEmitter {
  writableFinished = false
  destroyed = false
  close(): void {
    this.destroyed = true
    this.emit('close')
  }
}

describe('forwardAbort', () => {
  it('aborts the call when the client closes before its answer is finished, cut "client"', () => {
    const client = new Client()
    const a = forwardAbort(client, new AbortController().signal)
    expect([a.signal.aborted, a.cut]).toEqual([false, undefined])
    client.close()
    expect([a.signal.aborted, a.cut]).toEqual([true, 'client'])
  })

  it('does not abort when the socket closes after the whole answer was written', () => {
    const client = new Client()
    const a = forwardAbort(client, new AbortController().signal)
    client.writableFinished = true
    client.close()
    expect([a.signal.aborted, a.cut]).toEqual([false, undefined])
  })

  it('aborts on shutdown with cut "shutdown", and keeps the first cause when the client goes too', () => {
    const client = new Client()
    const stop = new AbortController()
    const a = forwardAbort(client, stop.signal)
    stop.abort()
    client.close()
    expect([a.signal.aborted, a.cut]).toEqual([true, 'shutdown'])
  })

  it('keeps "client" when shutdown comes after the client went away', () => {
    const client = new Client()
    const stop = new AbortController()
    const a = forwardAbort(client, stop.signal)
    client.close()
    stop.abort()
    expect(a.cut).toBe('client')
  })

  it('is cut at once when shutdown is already stopping, or the client is already gone', () => {
    const stopped = new AbortController()
    stopped.abort()
    expect(forwardAbort(new Client(), stopped.signal).cut).toBe('shutdown')
    const gone = new Client()
    gone.destroyed = true
    expect(forwardAbort(gone, new AbortController().signal).cut).toBe('client')
  })

  it('removes its listeners on dispose: a later close or shutdown aborts nothing', () => {
    const client = new Client()
    const stop = new AbortController()
    const a = forwardAbort(client, stop.signal)
    a.dispose()
    expect(client.listenerCount('close')).toBe(0)
    client.close()
    stop.abort()
    expect([a.signal.aborted, a.cut]).toEqual([false, undefined])
  })
})
