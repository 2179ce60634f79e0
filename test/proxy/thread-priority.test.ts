import os from 'node:os'
import path from 'node:path'
import { Worker } from 'node:worker_threads'
import { SOURCE_REGISTER } from '../../proxy/package-root'
import { lowerThisThread } from '../../proxy/thread-priority'

/** What lowerThisThread returned for each of `nices`, called in order in a thread of its own. */
async function inAThread(nices: number[]): Promise<Array<number | null>> {
  const worker = new Worker(path.join(__dirname, '..', 'support', 'lower-thread-worker.ts'), {
    execArgv: ['-r', SOURCE_REGISTER],
    workerData: nices,
  })
  try {
    return await new Promise((resolve, reject) => {
      worker.once('message', resolve)
      worker.once('error', reject)
    })
  } finally {
    await worker.terminate()
  }
}

const onLinux = process.platform === 'linux' ? it : it.skip

describe('lowerThisThread', () => {
  onLinux('lowers the calling thread only, and never raises it again', async () => {
    const mine = os.getPriority(process.pid)
    // 19 is the kernel's most a nice value goes; a value past it is held there.
    expect(await inAThread([12, 5, 30])).toEqual([12, 12, 19])
    expect(os.getPriority(process.pid)).toBe(mine)
  })

  it('changes nothing where a thread has no nice value of its own', () => {
    expect(lowerThisThread(10, 'darwin')).toBeUndefined()
    expect(lowerThisThread(10, 'win32')).toBeUndefined()
  })
})
