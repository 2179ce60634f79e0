/**
 * store/git/check, removeOrphans: a start removes the pack files no index names — temp files
 * (git's and holdfast's), a `.pack` without its `.idx`, a `.rev` or `.bitmap` without its `.pack` —
 * and never a pack that has its index, its `.rev` and `.bitmap`, a pack git was told to keep, or
 * git's `.keep`, `.promisor` and `.mtimes` files; git reads the repository as before.
 */
import fs from 'node:fs'
import path from 'node:path'
import { removeOrphans } from '../../../../proxy/store/git/check'
import { gitObject } from '../../../../proxy/store/git/objects'
import { writePack } from '../../../../proxy/store/git/pack'
import { bareRepo, git } from '../git.support'

let dir: string
let gitdir: string
beforeEach(() => {
  ;({ dir, gitdir } = bareRepo('holdfast-orphans-'))
})
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }))

const packDir = (): string => path.join(gitdir, 'objects', 'pack')
const files = (): string[] => fs.readdirSync(packDir()).sort()
const touch = (name: string): void => fs.writeFileSync(path.join(packDir(), name), 'x')
const fake = (c: string): string => `pack-${c.repeat(40)}`

describe('removeOrphans', () => {
  it('removes temp files, a pack without its index and a .rev or .bitmap without its pack, and nothing else', () => {
    const blob = gitObject('blob', Buffer.from('read\n'))
    const whole = writePack(gitdir, [blob]) as string
    touch(`${whole}.rev`)
    touch(`${whole}.bitmap`)
    // Git's own: a kept pack without its index (a fetch under way), and the files that describe packs.
    touch(`${fake('b')}.pack`)
    touch(`${fake('b')}.keep`)
    touch(`${fake('c')}.promisor`)
    touch(`${fake('c')}.mtimes`)
    const kept = files()
    const orphans = [
      `${fake('d')}.pack`,
      `${fake('e')}.rev`,
      `${fake('e')}.bitmap`,
      `${fake('f')}.pack`,
      `${fake('f')}.rev`,
      'tmp_idx_Ab12Cd',
      'tmp_pack_Xy34Zw',
      'tmp_pack_hf123.abcdef01.7',
    ].sort()
    for (const f of orphans) touch(f)
    expect(removeOrphans(gitdir)).toEqual(orphans)
    expect(files()).toEqual(kept)
    expect(git(gitdir, 'cat-file', '-p', blob.oid)).toBe('read\n')
    expect(removeOrphans(gitdir)).toEqual([])
  })

  it('finds nothing in a repository with no pack directory', () => {
    fs.rmSync(packDir(), { recursive: true, force: true })
    expect(removeOrphans(gitdir)).toEqual([])
  })
})
