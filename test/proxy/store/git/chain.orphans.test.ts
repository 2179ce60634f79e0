/**
 * store/git/chain, why a removal round takes a replaced pack's index before its pack (issue 41,
 * item 4): killed between the two, a pack without its index is read past by isomorphic-git and git
 * alike (the next start removes it), while isomorphic-git, meeting an index without its pack, fails
 * the read of an object that index lists instead of going on to the other packs (so it fails
 * whenever the directory lists the index before its successor's, though that holds the object).
 */
import fs from 'node:fs'
import path from 'node:path'
import git from 'isomorphic-git'
import { gitObject } from '../../../../proxy/store/git/objects'
import { writePack } from '../../../../proxy/store/git/pack'
import { openRepo } from '../../../../proxy/store/git/repo'
import { bareRepo, git as realGit } from '../git.support'

let dir: string
let gitdir: string
beforeEach(() => {
  ;({ dir, gitdir } = bareRepo('holdfast-chain-orphans-'))
})
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }))

/** A replaced pack (holding `a`) and its successor (holding `a` and `b`); `a` as read once `gone` of the replaced one is removed. */
async function readWithout(gone: '.idx' | '.pack'): Promise<string> {
  const a = gitObject('blob', Buffer.from('a\n'))
  const old = writePack(gitdir, [a]) as string
  writePack(gitdir, [a, gitObject('blob', Buffer.from('b\n'))])
  fs.rmSync(path.join(gitdir, 'objects', 'pack', `${old}${gone}`))
  expect(realGit(gitdir, 'cat-file', '-p', a.oid)).toBe('a\n')
  const { blob } = await git.readBlob({ fs: openRepo(gitdir).fs, gitdir, oid: a.oid, cache: {} })
  return Buffer.from(blob).toString()
}

describe('a replaced pack half removed', () => {
  it('reads on when the index went first', async () => {
    expect(await readWithout('.idx')).toBe('a\n')
  })

  it('fails an isomorphic-git read, not answering "not found", when the pack went first', async () => {
    const a = gitObject('blob', Buffer.from('a\n'))
    const old = writePack(gitdir, [a]) as string
    fs.rmSync(path.join(gitdir, 'objects', 'pack', `${old}.pack`))
    const read = git.readBlob({ fs: openRepo(gitdir).fs, gitdir, oid: a.oid, cache: {} })
    await expect(read).rejects.toThrow(/Could not read packfile/)
  })
})
