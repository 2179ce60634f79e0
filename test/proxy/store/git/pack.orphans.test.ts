/**
 * store/git/pack, when the disk refuses the index (issue 41, item 4): a pack whose index cannot be
 * written is removed with the temp file, so a full disk leaves no pack file no index names; a pack
 * of the same name that was there before the write (the same objects written again) stays, with
 * its index, and git reads it.
 */
import fs from 'node:fs'
import path from 'node:path'
import { gitObject } from '../../../../proxy/store/git/objects'
import { writePack } from '../../../../proxy/store/git/pack'
import { bareRepo, git } from '../git.support'

let dir: string
let gitdir: string
beforeEach(() => {
  ;({ dir, gitdir } = bareRepo('holdfast-pack-orphans-'))
})
afterEach(() => {
  jest.restoreAllMocks()
  fs.rmSync(dir, { recursive: true, force: true })
})

const packDir = (): string => path.join(gitdir, 'objects', 'pack')
const files = (): string[] => (fs.existsSync(packDir()) ? fs.readdirSync(packDir()).sort() : [])

/** Every write after the first `allowed` fails as a full disk fails it. */
function fullDiskAfter(allowed: number): void {
  const writev = fs.writevSync
  let calls = 0
  jest.spyOn(fs, 'writevSync').mockImplementation((...args: Parameters<typeof fs.writevSync>) => {
    if (++calls > allowed)
      throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' })
    return writev(...args)
  })
}

describe('writePack on a disk that refuses the index', () => {
  it('removes the pack whose index could not be written, and leaves no temp file', () => {
    const blob = gitObject('blob', Buffer.from('hello\n'))
    fullDiskAfter(1)
    expect(() => writePack(gitdir, [blob])).toThrow(/ENOSPC/)
    expect(files()).toEqual([])
    expect(git(gitdir, 'fsck', '--strict', '--no-dangling')).toBe('')
  })

  it('keeps a pack of the same name that was there before, with its index, and git reads it', () => {
    const blob = gitObject('blob', Buffer.from('kept\n'))
    const name = writePack(gitdir, [blob]) as string
    const before = files()
    expect(before).toEqual([`${name}.idx`, `${name}.pack`])
    fullDiskAfter(1)
    expect(() => writePack(gitdir, [blob])).toThrow(/ENOSPC/)
    jest.restoreAllMocks()
    expect(files()).toEqual(before)
    expect(git(gitdir, 'cat-file', '-p', blob.oid)).toBe('kept\n')
  })
})
