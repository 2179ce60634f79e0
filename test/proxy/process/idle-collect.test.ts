import { fullCollection, IdleCollector } from '../../../proxy/process/idle-collect'

/** Every collector a test made: stopped after it. */
const made: IdleCollector[] = []
const collector = (...args: ConstructorParameters<typeof IdleCollector>): IdleCollector => {
  const idle = new IdleCollector(...args)
  made.push(idle)
  return idle
}

/** A collector whose collection and trim are counted, in the order they ran. */
function counting(idleMs: number): { idle: IdleCollector; count: () => number; ran: string[] } {
  const ran: string[] = []
  const idle = collector(
    idleMs,
    () => ran.push('collect'),
    () => {
      ran.push('trim')
      return true
    },
  )
  return { idle, count: () => ran.filter((r) => r === 'collect').length, ran }
}

/** A request that begins and ends at once; `grows` false for a health poll. */
function request(idle: IdleCollector, grows = true): void {
  idle.begin(grows)
  idle.end(grows)
}

describe('IdleCollector', () => {
  beforeEach(() => jest.useFakeTimers())
  afterEach(() => {
    for (const idle of made.splice(0)) idle.stop()
    jest.useRealTimers()
  })

  it('collects once when nothing has been in flight for the idle time, and not again without a new request', () => {
    const { idle, count } = counting(3000)
    request(idle)
    jest.advanceTimersByTime(2999)
    expect(count()).toBe(0)
    expect(idle.lastCollectionMs).toBeUndefined()
    jest.advanceTimersByTime(1)
    expect(count()).toBe(1)
    expect(idle.lastCollectionMs).toBeGreaterThanOrEqual(0)
    jest.advanceTimersByTime(60_000)
    expect(count()).toBe(1)
    request(idle)
    jest.advanceTimersByTime(3000)
    expect(count()).toBe(2)
  })

  it('never collects while a request is in flight', () => {
    const { idle, count } = counting(3000)
    idle.begin()
    request(idle)
    jest.advanceTimersByTime(60_000)
    expect(count()).toBe(0)
    idle.end(false)
    jest.advanceTimersByTime(3000)
    expect(count()).toBe(1)
  })

  it('waits the whole idle time after the last request ended, however many came and went before', () => {
    const { idle, count } = counting(3000)
    request(idle)
    jest.advanceTimersByTime(2000)
    request(idle)
    jest.advanceTimersByTime(2999) // 4999 ms after the first end, 2999 after the last
    expect(count()).toBe(0)
    jest.advanceTimersByTime(1)
    expect(count()).toBe(1)
  })

  it('collects after steps, not after requests that grow nothing (health polls), though it waits for them', () => {
    const { idle, count } = counting(3000)
    request(idle, false)
    jest.advanceTimersByTime(60_000)
    expect(count()).toBe(0)
    request(idle)
    idle.begin(false)
    jest.advanceTimersByTime(60_000)
    expect(count()).toBe(0)
    idle.end(false)
    jest.advanceTimersByTime(3000)
    expect(count()).toBe(1)
  })

  it('is not put off by requests that grow nothing: polled every second, it still collects after the idle time (regression)', () => {
    const { idle, count } = counting(3000)
    request(idle)
    for (let t = 0; t < 3000; t += 1000) {
      jest.advanceTimersByTime(1000)
      request(idle, false)
    }
    expect(count()).toBe(1)
  })

  it('trims malloc’s heaps right after each collection, and times both', () => {
    const { idle, ran } = counting(3000)
    request(idle)
    jest.advanceTimersByTime(3000)
    request(idle)
    jest.advanceTimersByTime(3000)
    expect(ran).toEqual(['collect', 'trim', 'collect', 'trim'])
    expect(idle.lastCollectionMs).toBeGreaterThanOrEqual(0)
    expect(idle.lastTrimMs).toBeGreaterThanOrEqual(0)
  })

  it('records no trim time where there is no malloc_trim to run', () => {
    const idle = collector(
      3000,
      () => undefined,
      () => undefined,
    )
    request(idle)
    jest.advanceTimersByTime(3000)
    expect(idle.lastCollectionMs).toBeGreaterThanOrEqual(0)
    expect(idle.lastTrimMs).toBeUndefined()
  })

  it('collects nothing when stopped or when the idle time is 0', () => {
    const stopped = counting(3000)
    request(stopped.idle)
    stopped.idle.stop()
    const never = counting(0)
    request(never.idle)
    jest.advanceTimersByTime(60_000)
    expect([stopped.count(), never.count()]).toEqual([0, 0])
  })

  it('at an idle time of 0 neither collects nor trims malloc’s heaps, however many steps came (limits.idle_collect_ms: 0)', () => {
    const never = counting(0)
    for (let i = 0; i < 5; i++) request(never.idle)
    jest.advanceTimersByTime(60_000)
    expect(never.ran).toEqual([])
    expect([never.idle.lastCollectionMs, never.idle.lastTrimMs]).toEqual([undefined, undefined])
  })

  it('lets go of what onIdle was given before it collects, once per idle period, and not without a step', () => {
    const { idle, ran } = counting(3000)
    idle.onIdle(() => ran.push('release'))
    request(idle, false)
    jest.advanceTimersByTime(60_000)
    expect(ran).toEqual([])
    request(idle)
    jest.advanceTimersByTime(3000)
    expect(ran).toEqual(['release', 'collect', 'trim'])
    jest.advanceTimersByTime(60_000)
    expect(ran).toEqual(['release', 'collect', 'trim'])
  })

  it('waits for a release that answers with a promise, and puts the collection off when a request began meanwhile', async () => {
    const { idle, ran } = counting(3000)
    let done: () => void = () => undefined
    idle.onIdle(() => new Promise<void>((r) => (done = r)).then(() => ran.push('released')))
    request(idle)
    jest.advanceTimersByTime(3000)
    expect(ran).toEqual([])
    idle.begin() // a step arrives while the release is under way
    done()
    await Promise.resolve()
    await jest.advanceTimersByTimeAsync(0)
    expect(ran).toEqual(['released'])
    idle.end()
    await jest.advanceTimersByTimeAsync(3000) // the next idle time: released again, then collected
    done()
    await jest.advanceTimersByTimeAsync(0)
    expect(ran).toEqual(['released', 'released', 'collect', 'trim'])
  })
})

describe('fullCollection', () => {
  it('reaches V8’s own full collection', () => {
    const gc = fullCollection()
    expect(typeof gc).toBe('function')
    expect(() => gc?.()).not.toThrow()
  })
})
