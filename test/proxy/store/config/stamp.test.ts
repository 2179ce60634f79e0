/**
 * store/config/stamp: a file's identity for "has it changed since I read it". Covers: absent files read as
 * undefined, an untouched file keeps its stamp, and a rewrite of the same size (even at once), a
 * replacement by rename, and a size change each give a new stamp.
 */
import fs from 'node:fs'
import path from 'node:path'
import { fileStamp } from '../../../../proxy/store/config/stamp'
import { tempDir } from '../git.support'

let dir: string
let file: string
beforeEach(() => {
  dir = tempDir('holdfast-stamp-')
  file = path.join(dir, 'holdfast.yaml')
})
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }))

describe('fileStamp', () => {
  it('is undefined for a file that does not exist, and for a path under a missing directory', () => {
    expect(fileStamp(file)).toBeUndefined()
    expect(fileStamp(path.join(dir, 'missing', 'x'))).toBeUndefined()
  })

  it('stays the same while nobody touches the file, and is made of inode, size, mtime and ctime', () => {
    fs.writeFileSync(file, 'listen: {}\n')
    const a = fileStamp(file)
    fs.readFileSync(file) // reading is not changing
    expect(fileStamp(file)).toBe(a)
    const st = fs.statSync(file, { bigint: true })
    expect(a).toBe(`${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`)
  })

  it('changes when the file is rewritten in place with the same size straight away', () => {
    fs.writeFileSync(file, 'aaaa')
    const before = fileStamp(file)
    // Same size, same inode, within the same millisecond: only the nanosecond times can tell.
    // (This relies on the file system's fine-grained timestamps, as the module does; ext4 and tmpfs
    // on Linux 6.13+ have them. On a kernel with coarse (per-tick) timestamps it may not hold.)
    fs.writeFileSync(file, 'bbbb')
    const after = fileStamp(file)
    expect(after).toBeDefined()
    expect(after).not.toBe(before)
  })

  it('changes when the file is replaced by a rename (a new inode) or grows', () => {
    fs.writeFileSync(file, 'one')
    const first = fileStamp(file)
    const temp = path.join(dir, 'tmp')
    fs.writeFileSync(temp, 'two')
    fs.renameSync(temp, file)
    const second = fileStamp(file)
    expect(second).not.toBe(first)
    expect(second?.split(':')[0]).not.toBe(first?.split(':')[0])
    fs.appendFileSync(file, '!')
    expect(fileStamp(file)?.split(':')[1]).toBe('4')
  })

  it('becomes undefined again once the file is removed', () => {
    fs.writeFileSync(file, 'x')
    expect(fileStamp(file)).toBeDefined()
    fs.rmSync(file)
    expect(fileStamp(file)).toBeUndefined()
  })
})
