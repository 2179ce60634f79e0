/**
 * store/git/pack-index: a version 2 pack index written for a pack's entries reads back as git
 * reads it (`git show-index`: offset, id and CRC-32 of each), offsets past 2 GiB included (the
 * large-offset table).
 */
import fs from 'node:fs'
import path from 'node:path'
import { gitObject } from '../../../../proxy/store/git/objects'
import { PackBuilder } from '../../../../proxy/store/git/pack'
import { indexOf, readIndex } from '../../../../proxy/store/git/pack-index'
import { gitBytes, tempDir } from '../git.support'

let dir: string
beforeEach(() => {
  dir = tempDir('holdfast-pack-index-')
  fs.mkdirSync(path.join(dir, 'objects', 'pack'), { recursive: true })
})
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }))

describe('pack indexes', () => {
  it("lists each object's offset, id and CRC-32 as git show-index reads them", () => {
    const pack = new PackBuilder()
    for (let i = 0; i < 300; i++) pack.add(gitObject('blob', Buffer.from(`object ${i} `.repeat(i + 1))))
    const written = pack.write(dir) as { name: string }
    const idx = fs.readFileSync(path.join(dir, 'objects', 'pack', `${written.name}.idx`))
    const byGit = gitBytes(dir, ['show-index'], idx)
      .toString()
      .trim()
      .split('\n')
      .map((l) => {
        const [offset, oid, crc] = l.split(' ')
        return { oid, offset: Number(offset), crc: parseInt((crc as string).slice(1, -1), 16) }
      })
    expect(readIndex(idx)).toEqual(byGit)
    expect(byGit).toHaveLength(300)
  })

  it('writes and reads offsets past 2 GiB through the large-offset table', () => {
    const entries = [
      { oid: 'aa'.repeat(20), offset: 12, crc: 1, depth: 0 },
      { oid: '11'.repeat(20), offset: 0x9000_0000, crc: 2, depth: 0 },
      { oid: 'ff'.repeat(20), offset: 5 * 2 ** 32 + 7, crc: 0xffff_ffff, depth: 0 },
    ]
    const idx = indexOf(entries, Buffer.alloc(20))
    const read = readIndex(idx)
    expect(read).toEqual(
      [...entries]
        .sort((a, b) => (a.oid < b.oid ? -1 : 1))
        .map(({ oid, offset, crc }) => ({ oid, offset, crc })),
    )
  })
})
