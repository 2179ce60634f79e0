/**
 * store/git/objects: objects hashed as git hashes them. Covers: object ids equal `git hash-object`,
 * commit bodies are what git would store, and an edit spliced into pieces gives the bytes the edit
 * gives the joined body. (Tree bodies: tree.test.ts.)
 */
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import { commitBody, gitObject, splicePieces } from '../../../../proxy/store/git/objects'
import { rng } from '../../../support/fuzz'
import { bareRepo, gitBytes } from '../git.support'

let dir: string
beforeEach(() => {
  ;({ dir } = bareRepo('holdfast-objects-'))
})
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }))

describe('object ids', () => {
  it('hashes a blob exactly as git hash-object does, whatever its bytes', () => {
    for (const body of [
      Buffer.alloc(0),
      Buffer.from('hello\n'),
      Buffer.from([0, 0xff, 0x0a, 0x0d]),
      randomBytes(3000),
    ]) {
      const expected = gitBytes(dir, ['hash-object', '--stdin'], body).toString().trim()
      expect(gitObject('blob', body).oid).toBe(expected)
    }
  })
})

describe('commitBody', () => {
  it('writes tree, parents, author and committer at +0000, and ends the message with one newline', () => {
    const tree = gitObject('tree', Buffer.alloc(0)).oid
    const who = { name: 'Ada', email: 'ada@example.com', timestamp: 1_700_000_000 }
    const p1 = 'a'.repeat(40)
    const p2 = 'b'.repeat(40)
    expect(commitBody(tree, [p1, p2], who, 'subject\n\nbody').toString()).toBe(
      `tree ${tree}\nparent ${p1}\nparent ${p2}\n` +
        'author Ada <ada@example.com> 1700000000 +0000\n' +
        'committer Ada <ada@example.com> 1700000000 +0000\n\nsubject\n\nbody\n',
    )
    expect(commitBody(tree, [], who, 'm\n').toString().endsWith('\n\nm\n')).toBe(true)
  })
})

describe('splicePieces', () => {
  it('splices an edit into pieces as into their joined bytes, at any place, and keeps the unchanged pieces', () => {
    const random = rng(14)
    const int = (n: number): number => Math.floor(random() * n)
    for (let round = 0; round < 300; round++) {
      // Pieces of every size, large ones among them (an agent's first tree), then edits on edits.
      let pieces: Buffer[] = Array.from({ length: 1 + int(4) }, () =>
        randomBytes(int(3) === 0 ? 5000 + int(70_000) : 1 + int(300)),
      )
      let whole: Buffer = Buffer.concat(pieces)
      for (let e = 0; e < 8; e++) {
        const prefix = int(whole.length + 1)
        const skip = int(3) === 0 ? int(Math.min(40, whole.length - prefix) + 1) : 0
        const insert = randomBytes(int(2) === 0 ? 31 : int(200))
        const next = splicePieces(pieces, prefix, skip, insert)
        const expected = Buffer.concat([whole.subarray(0, prefix), insert, whole.subarray(prefix + skip)])
        expect(Buffer.concat(next).equals(expected)).toBe(true)
        // A large piece the edit did not touch is kept as it is, not copied.
        let at = 0
        for (const p of pieces) {
          if (p.length >= 4096 && (at + p.length <= prefix || at >= prefix + skip)) expect(next).toContain(p)
          at += p.length
        }
        pieces = next
        whole = expected
      }
    }
  })
})
