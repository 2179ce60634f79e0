/** report/step-files: the windowed reader gives every file of every step as record/read does, across window edges. */
import { readStepFile } from '../../../proxy/record/read'
import { directFiles, windowedFiles } from '../../../proxy/report/step-files'
import { Workspace } from '../../../proxy/store/workspace'
import { startProxy, type Proxy } from '../../support/harness'
import { mainStep, sendStep } from '../../support/view-demo'

let p: Proxy
beforeAll(async () => {
  p = await startProxy()
  for (let i = 1; i <= 5; i++) await sendStep(p, 'w', 'main', mainStep(i, ['Read']))
  await p.settled()
})
afterAll(() => p.close())

describe('step files', () => {
  it('read by windows are the files readStepFile reads', async () => {
    const ws = new Workspace(p.home, 'w')
    const windowed = windowedFiles(ws, 'main', 2)
    const direct = directFiles(ws, 'main')
    for (let n = 1; n <= 5; n++) {
      for (const f of ['request.json', 'meta.json', 'response.json', 'response.sse']) {
        const want = await readStepFile(ws, 'main', n, f)
        expect(await windowed.file(n, f)).toEqual(want)
        expect(await direct.file(n, f)).toEqual(want)
      }
    }
    expect(await windowed.file(9, 'request.json')).toBeUndefined()
  })
})
