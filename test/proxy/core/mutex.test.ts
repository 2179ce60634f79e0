/**
 * The per-agent Mutex: sections run one at a time in call order, a failing one does not stop the
 * next, and an idle lock keeps nothing of the last section's result alive (each agent has one).
 */
import v8 from 'node:v8'
import vm from 'node:vm'
import { Mutex } from '../../../proxy/core/mutex'

describe('Mutex', () => {
  it('runs sections one at a time in call order, and a failing one does not stop the next', async () => {
    const m = new Mutex()
    const order: string[] = []
    const section =
      (name: string, ms: number, fail = false) =>
      async (): Promise<string> => {
        order.push(`${name}+`)
        await new Promise((r) => setTimeout(r, ms))
        order.push(`${name}-`)
        if (fail) throw new Error(name)
        return name
      }
    const a = m.run(section('a', 20))
    const b = m.run(section('b', 1, true))
    const c = m.run(section('c', 1))
    await expect(a).resolves.toBe('a')
    await expect(b).rejects.toThrow('b')
    await expect(c).resolves.toBe('c')
    expect(order).toEqual(['a+', 'a-', 'b+', 'b-', 'c+', 'c-'])
  })

  it('keeps nothing of the last section’s result once it is done', async () => {
    v8.setFlagsFromString('--expose-gc')
    const gc = vm.runInNewContext('gc') as () => void
    const m = new Mutex()
    let ref: WeakRef<object> | undefined
    await m.run(async () => {
      const result = { request: Buffer.alloc(1024 * 1024) }
      ref = new WeakRef(result)
      return result
    })
    // Let the promise jobs settle, then collect: only the lock could still hold the result.
    await new Promise((r) => setImmediate(r))
    gc()
    expect(ref?.deref()).toBeUndefined()
  })
})
