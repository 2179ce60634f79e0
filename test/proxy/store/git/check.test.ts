/**
 * store/git/check: what a start checks before anything reads a repository. A whole pack passes;
 * an index or pack cut short, emptied, or whose ends do not match is moved aside whole (index and
 * pack together), and git then reads the repository again; an `agents/*` tip that cannot be read
 * is moved back along its reflog to the newest commit that can, naming the steps it lost; with no
 * readable commit in its reflog the branch is set aside under `refs/holdfast/broken/`.
 */
import fs from 'node:fs'
import path from 'node:path'
import { checkPacks, checkTips, packProblem } from '../../../../proxy/store/git/check'
import { readRef } from '../../../../proxy/store/git/refs'
import { resetPackCache } from '../../../../proxy/store/git/repo'
import { commitSteps, type StepToCommit } from '../../../../proxy/record/commit/step-commits'
import { configRepo, git, packFiles } from '../git.support'

let dir: string
let gitdir: string
let repo: Awaited<ReturnType<typeof configRepo>>['repo']
beforeEach(async () => {
  ;({ dir, gitdir, repo } = await configRepo('holdfast-check-'))
})
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }))

const step = (agent: string, n: number): StepToCommit => ({
  agent,
  n,
  model: 'm',
  files: { 'request.json': Buffer.from(`{"n":${n}}`), 'meta.json': Buffer.from('{}') },
})
const packDir = (): string => path.join(gitdir, 'objects', 'pack')
/** The packs the last batch wrote, set by `batch`. */
let lastPacks: string[] = []
async function batch(steps: StepToCommit[], durable = false): Promise<void> {
  const before = new Set(packFiles(gitdir))
  expect((await commitSteps(repo, steps, { durable })).failed.size).toBe(0)
  lastPacks = packFiles(gitdir).filter((f) => !before.has(f))
}
const newestPack = (): string => path.join(packDir(), (lastPacks[0] as string).replace(/\.pack$/, ''))
/** Three batches of one step each on `agents/a`: three packs, three reflog lines. */
async function threeBatches(): Promise<void> {
  for (const n of [1, 2, 3]) await batch([step('a', n)], n === 2)
}

describe('packs', () => {
  it('passes a whole pack, and names what is wrong with one cut short, emptied or mismatched', async () => {
    await threeBatches()
    const base = newestPack()
    expect(packProblem(base)).toBeUndefined()
    const pack = fs.readFileSync(`${base}.pack`)
    fs.chmodSync(`${base}.pack`, 0o644)
    fs.writeFileSync(`${base}.pack`, pack.subarray(0, pack.length - 7))
    expect(packProblem(base)).toBe('its pack does not end with the checksum its index names')
    fs.writeFileSync(`${base}.pack`, Buffer.alloc(pack.length))
    expect(packProblem(base)).toBe('its pack does not start with PACK')
    fs.chmodSync(`${base}.idx`, 0o644)
    fs.writeFileSync(`${base}.idx`, '')
    expect(packProblem(base)).toBe('its index is 0 bytes long, shorter than any index')
  })

  it('moves a pack and its index aside together when either is not whole, and git reads the rest again', async () => {
    await threeBatches()
    const base = newestPack()
    fs.truncateSync(`${base}.pack`, 0)
    fs.truncateSync(`${base}.idx`, 0)
    const aside = path.join(dir, 'damaged-packs')
    const moved = checkPacks(gitdir, aside)
    expect(moved).toEqual([
      { name: path.basename(base), reason: expect.stringMatching(/index is 0 bytes/), to: aside },
    ])
    expect(fs.readdirSync(aside).sort()).toEqual([
      `${path.basename(base)}.idx`,
      `${path.basename(base)}.pack`,
    ])
    expect(checkPacks(gitdir, aside)).toEqual([])
    // The tip's objects went with the pack: git says so, and the check below mends it.
    expect(() => git(gitdir, 'log', 'agents/a')).toThrow()
  })
})

describe('branch tips', () => {
  it('moves a branch whose tip cannot be read back along its reflog, naming the steps it lost', async () => {
    await threeBatches()
    const before = (await readRef(repo, 'refs/heads/agents/a')) as string
    const second = git(gitdir, 'rev-parse', 'agents/a~1').trim()
    const base = newestPack()
    fs.truncateSync(`${base}.pack`, 0)
    fs.truncateSync(`${base}.idx`, 0)
    checkPacks(gitdir, path.join(dir, 'aside'))
    resetPackCache(gitdir)
    expect(await checkTips(repo, path.join(dir, 'aside-refs'))).toEqual([
      {
        ref: 'refs/heads/agents/a',
        from: before,
        to: second,
        lost: { from: 3, to: 3 },
        reason: expect.stringMatching(/cannot be read/),
      },
    ])
    expect(git(gitdir, 'rev-parse', 'agents/a').trim()).toBe(second)
    expect(git(gitdir, 'fsck', '--no-dangling')).toBe('')
    expect(git(gitdir, 'reflog', '-1', '--format=%gs', 'agents/a').trim()).toMatch(/^holdfast: moved back/)
    expect(await checkTips(repo, path.join(dir, 'aside-refs'))).toEqual([]) // a second start finds it readable
  })

  it('deletes a branch none of whose reflog can be read, keeping its value in a file aside', async () => {
    await batch([step('b', 1)])
    const tip = (await readRef(repo, 'refs/heads/agents/b')) as string
    fs.rmSync(path.join(gitdir, 'logs'), { recursive: true })
    const base = newestPack()
    fs.truncateSync(`${base}.idx`, 0)
    checkPacks(gitdir, path.join(dir, 'aside'))
    expect(await checkTips(repo, path.join(dir, 'aside-refs'))).toEqual([
      { ref: 'refs/heads/agents/b', from: tip, to: null, lost: null, reason: expect.any(String) },
    ])
    expect(await readRef(repo, 'refs/heads/agents/b')).toBeUndefined()
    expect(fs.readFileSync(path.join(dir, 'aside-refs', 'refs', 'heads', 'agents', 'b'), 'utf8')).toBe(
      `${tip}\n`,
    )
    expect(git(gitdir, 'fsck', '--no-dangling')).toBe('')
  })
})
