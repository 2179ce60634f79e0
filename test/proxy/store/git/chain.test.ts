/**
 * store/git/chain: an agent's chain pack, extended batch by batch. Covers: an extension holds the
 * old pack's objects and the new ones, and the old pack goes once the new one is flushed; an object
 * the chain holds is not written again; a request is a delta on the previous batch's; a chain past
 * CHAIN_MAX is closed and left, the next batch starting a new one; a chain whose pack someone else
 * merged away starts again; the bases kept for the next batches stay within a byte budget;
 * maintenance leaves open chains alone; a reading handle forgets the
 * packs that were replaced.
 */
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { BASES_BUDGET, CHAIN_MAX, chainOf, extendChain, retired } from '../../../../proxy/store/git/chain'
import { maintain } from '../../../../proxy/store/git/merge'
import { gitObject, type GitObject } from '../../../../proxy/store/git/objects'
import { writePack } from '../../../../proxy/store/git/pack'
import { openRepo } from '../../../../proxy/store/git/repo'
import { configRepo, git, gitBytes, packFiles } from '../git.support'

let dir: string
let gitdir: string
beforeEach(async () => {
  ;({ dir, gitdir } = await configRepo('holdfast-chain-'))
})
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }))

const blob = (text: string | Buffer): GitObject => gitObject('blob', Buffer.from(text))
const packIndexOf = (name: string): string => path.join(gitdir, 'objects', 'pack', `${name}.idx`)
/** `git verify-pack -v`'s line for `oid`: `<oid> <type> <size> <size-in-pack> <offset> [<depth> <base>]`. */
const verifyLine = (pack: string, oid: string): string[] =>
  (
    git(gitdir, 'verify-pack', '-v', packIndexOf(pack))
      .split('\n')
      .find((l) => l.startsWith(oid)) ?? ''
  ).split(/\s+/)

/** A request of `n` turns: each the one before with a turn added. */
const request = (n: number): Buffer =>
  Buffer.from(
    JSON.stringify({
      messages: Array.from({ length: n }, (_, i) => `turn ${i}: ${'word '.repeat(200)}${i}`),
    }),
  )

describe('chain packs', () => {
  it('extends a chain into a pack holding the old objects and the new, removing the old pack once the new one is flushed', async () => {
    const before = packFiles(gitdir).length
    const a = blob('first')
    const first = extendChain(gitdir, 'agent', [a], {}) as string
    expect(packFiles(gitdir)).toHaveLength(before + 1)
    const b = blob('second')
    const second = extendChain(gitdir, 'agent', [b, a], {}) as string
    expect(second).not.toBe(first)
    await retired()
    expect(packFiles(gitdir)).toHaveLength(before + 1)
    expect(fs.existsSync(packIndexOf(first))).toBe(false)
    const objects = gitBytes(gitdir, ['show-index'], fs.readFileSync(packIndexOf(second))).toString()
    expect(objects.trim().split('\n')).toHaveLength(2) // `a` once
    expect(git(gitdir, 'cat-file', 'blob', a.oid)).toBe('first')
    expect(git(gitdir, 'cat-file', 'blob', b.oid)).toBe('second')
    // Nothing new: the chain is left as it is.
    expect(extendChain(gitdir, 'agent', [blob('first')], {})).toBe(second)
  })

  it("writes a request as a delta on the previous batch's request, and git reads it", async () => {
    const one = blob(request(20))
    extendChain(gitdir, 'agent', [one], { request: one })
    const two = blob(request(21))
    two.similar = chainOf(gitdir, 'agent')?.bases.request
    const name = extendChain(gitdir, 'agent', [two], { request: two }) as string
    await retired()
    const line = verifyLine(name, two.oid)
    expect(line.slice(5)).toEqual(['1', one.oid]) // depth 1, on the previous request
    expect(Number(line[3])).toBeLessThan(two.body.length / 10)
    expect(gitBytes(gitdir, ['cat-file', 'blob', two.oid]).equals(two.body)).toBe(true)
    expect(git(gitdir, 'fsck', '--strict', '--no-dangling')).toBe('')
  })

  it('closes a chain past CHAIN_MAX: it is left as it is, and the next batch starts a new one, its request whole', async () => {
    const big = blob(crypto.randomBytes(CHAIN_MAX + 1000)) // random bytes do not compress
    const closed = extendChain(gitdir, 'agent', [big], { request: big }) as string
    const next = blob(Buffer.concat([big.body, Buffer.from('more')]))
    next.similar = chainOf(gitdir, 'agent')?.bases.request
    const opened = extendChain(gitdir, 'agent', [next], { request: next }) as string
    await retired()
    expect(packFiles(gitdir)).toEqual(expect.arrayContaining([`${closed}.pack`, `${opened}.pack`]))
    expect(verifyLine(opened, next.oid)).toHaveLength(5) // not a delta: its base is in the closed pack
    expect(git(gitdir, 'cat-file', '-s', next.oid).trim()).toBe(String(next.body.length))
    expect(git(gitdir, 'fsck', '--strict')).toMatch(/^(dangling blob [0-9a-f]{40}\n)*$/)
  })

  it('starts a chain again when its pack was merged away by someone else', async () => {
    const a = blob('a')
    extendChain(gitdir, 'agent', [a], {})
    git(gitdir, 'repack', '-adkq') // unreachable objects kept in the new pack
    const b = blob('b')
    const name = extendChain(gitdir, 'agent', [b], {}) as string
    const objects = gitBytes(gitdir, ['show-index'], fs.readFileSync(packIndexOf(name))).toString()
    expect(objects.trim().split('\n')).toHaveLength(1)
    expect(git(gitdir, 'cat-file', 'blob', a.oid)).toBe('a')
  })

  it('keeps no bases for a chain whose bases alone are over BASES_BUDGET (one very large request)', () => {
    const big = blob(Buffer.alloc(BASES_BUDGET + 1024, 7))
    extendChain(gitdir, 'huge', [big], { request: big })
    expect(chainOf(gitdir, 'huge')?.bases).toEqual({})
    expect(chainOf(gitdir, 'huge')?.held).toBe(0)
  })

  it('keeps at most BASES_BUDGET bytes of bases over all chains, letting the least recently extended go first', () => {
    const size = 3 * 1024 * 1024
    const n = Math.ceil(BASES_BUDGET / size) + 2
    for (let i = 0; i < n; i++) {
      const o = blob(Buffer.alloc(size, i)) // compresses to almost nothing: the packs stay small
      extendChain(gitdir, `agent${i}`, [o], { request: o })
    }
    const kept = Array.from(
      { length: n },
      (_, i) => Object.keys(chainOf(gitdir, `agent${i}`)?.bases ?? {}).length,
    )
    expect(kept.slice(-Math.floor(BASES_BUDGET / size))).toEqual(
      Array(Math.floor(BASES_BUDGET / size)).fill(1),
    )
    expect(kept[0]).toBe(0)
    expect(kept.filter((k) => k === 1).length * size).toBeLessThanOrEqual(BASES_BUDGET)
    // A chain without bases still extends: its next request is written whole.
    const next = blob(Buffer.concat([Buffer.alloc(size, 0), Buffer.from('more')]))
    next.similar = chainOf(gitdir, 'agent0')?.bases.request
    expect(next.similar).toBeUndefined()
    const name = extendChain(gitdir, 'agent0', [next], { request: next }) as string
    expect(verifyLine(name, next.oid)).toHaveLength(5)
  })

  it('is left alone by maintenance while it is open', async () => {
    for (let i = 0; i < 4; i++) writePack(gitdir, [blob(`small ${i}`)])
    const open = extendChain(gitdir, 'agent', [blob('mine')], {}) as string
    const done = await maintain(gitdir)
    expect(done.merged).toBe(5) // the root's pack and the four small ones
    expect(packFiles(gitdir).sort()).toEqual([`${done.name}.pack`, `${open}.pack`].sort())
  })

  it('is forgotten by a reading handle once replaced: the handle keeps no index of a pack that is gone', async () => {
    const repo = openRepo(gitdir)
    const read = (oid: string) =>
      import('isomorphic-git').then((g) => g.readBlob({ fs: repo.fs, gitdir, cache: repo.cache, oid }))
    let previous: GitObject | undefined
    const names: string[] = []
    for (let n = 1; n <= 8; n++) {
      const o = blob(request(n * 10))
      o.similar = previous
      names.push(extendChain(gitdir, 'agent', [o], { request: o }) as string)
      // Read while the packs it replaced are still there (they go after a grace).
      expect(Buffer.from((await read(o.oid)).blob).equals(o.body)).toBe(true)
      previous = o
    }
    await retired()
    expect(
      Buffer.from((await read((previous as GitObject).oid)).blob).equals((previous as GitObject).body),
    ).toBe(true)
    const cached = (): Map<string, Promise<{ offsetCache: object }>> => {
      const sym = Object.getOwnPropertySymbols(repo.cache)[0] as symbol
      return (repo.cache as Record<symbol, Map<string, Promise<{ offsetCache: object }>>>)[sym] as Map<
        string,
        Promise<{ offsetCache: object }>
      >
    }
    const files = [...cached().keys()].map((f) => path.basename(f, '.idx'))
    expect(files).toContain(names[7])
    expect(files.filter((f) => names.slice(0, 7).includes(f))).toEqual([])
  })
})
