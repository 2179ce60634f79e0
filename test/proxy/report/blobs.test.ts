/** report/blobs: one ls-tree lists an agent's step files and one cat-file reads their blobs, byte for byte as git holds them; unknown ids are left out. */
import { catBlobs, keepMetaOid, keptMetaOid, lsFiles } from '../../../proxy/report/blobs'
import { gitBytes, startProxy, type Proxy } from '../../support/harness'
import { mainStep, sendStep } from '../../support/view-demo'

let p: Proxy
beforeAll(async () => {
  p = await startProxy()
  for (let i = 1; i <= 2; i++) await sendStep(p, 'w', 'main', mainStep(i, ['Read']))
  await p.settled()
})
afterAll(() => p.close())

describe('batch reads', () => {
  it('list every step file under the agent and read each blob as git show does', async () => {
    const tip = gitBytes(p.repo('w'), 'rev-parse', 'agents/main').toString().trim()
    const files = await lsFiles(p.repo('w'), tip, 'steps/main')
    expect([...files.keys()].filter((f) => f.startsWith('002/')).sort()).toEqual(
      expect.arrayContaining(['002/meta.json', '002/request.json']),
    )
    const oid = files.get('002/request.json') as string
    const blobs = await catBlobs(p.repo('w'), [oid, '0'.repeat(40)])
    expect(blobs.get(oid)).toEqual(gitBytes(p.repo('w'), 'show', 'agents/main:steps/main/002/request.json'))
    expect(blobs.size).toBe(1)
    expect((await catBlobs(p.repo('w'), [])).size).toBe(0)
  })

  it('keep a step tree’s meta id once found', () => {
    keepMetaOid('tree-a', 'blob-a')
    expect(keptMetaOid('tree-a')).toBe('blob-a')
    expect(keptMetaOid('tree-b')).toBeUndefined()
  })
})
