/**
 * record/journal/places: bytes read at known places of a journal file. Several extents are joined
 * in order; several lists close together are one read and each comes back as it would alone; a
 * file shorter than its places is an error, never short bytes; no extents read as no bytes.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { readEach, readPlaced } from '../../../../proxy/record/journal/places'

let dir: string
let file: string
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'holdfast-places-'))
  file = path.join(dir, '001.log')
  fs.writeFileSync(file, 'abcdefghijklmnopqrstuvwxyz')
})
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }))

describe('reading at places', () => {
  it('joins several extents in order', () => {
    const bytes = readPlaced(file, [
      { offset: 0, length: 3 },
      { offset: 10, length: 2 },
    ])
    expect(bytes.toString()).toBe('abckl')
  })

  it('answers several lists as each would be alone, far apart or close', () => {
    const lists = [
      [{ offset: 2, length: 2 }],
      [
        { offset: 20, length: 3 },
        { offset: 5, length: 1 },
      ],
      [],
    ]
    expect(readEach(file, lists).map(String)).toEqual(['cd', 'uvwf', ''])
    expect(lists.map((l) => String(readPlaced(file, l)))).toEqual(['cd', 'uvwf', ''])
  })

  it('fails on a file shorter than its places', () => {
    expect(() => readPlaced(file, [{ offset: 20, length: 10 }])).toThrow(/ends before its frames do/)
  })
})
