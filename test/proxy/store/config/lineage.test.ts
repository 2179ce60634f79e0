/**
 * Governing and followed config on real repositories (store/config/lineage): config/* heads and
 * agent branches built with the git module, roles read at the followed commit.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { ConfigReader } from '../../../../proxy/store/config/lineage'
import { commitFiles, initRepo, openRepo, type Repo } from '../../../../proxy/store/git'
import { casRef, readRef } from '../../../../proxy/store/git/refs'

let dir: string
let repo: Repo

const roles = (model: string): string => `roles:\n  reviewer: {provider: anthropic, model: ${model}}\n`
async function commit(
  parent: string | undefined,
  files: Record<string, string>,
  message = 'c',
): Promise<string> {
  return commitFiles(repo, { parent, files, message })
}
async function setRef(ref: string, oid: string): Promise<void> {
  await casRef(repo, ref, oid, (await readRef(repo, ref)) ?? null)
}
async function followed(rev: string, key = rev) {
  return new ConfigReader(repo).resolve(key, () => Promise.resolve(rev))
}

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'holdfast-lineage-'))
  await initRepo(path.join(dir, 'repo.git'), {
    branch: 'config/default',
    files: { 'providers.yaml': roles('m1') },
    message: 'root',
  })
  repo = openRepo(path.join(dir, 'repo.git'))
})
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }))

const tip = async (ref: string): Promise<string> => (await readRef(repo, ref)) as string

describe('the followed config of a commit in a workspace repository', () => {
  it('is the lineage head for a fresh fork point, with its roles', async () => {
    const root = await tip('refs/heads/config/default')
    const step = await commit(root, { 'steps/a/001/request.json': '{}' })
    const r = await followed(step)
    expect(r).toMatchObject({ ok: true, followed: { kind: 'tip', commit: root } })
    expect(r).toMatchObject({
      ok: true,
      roles: { ok: true, value: { roles: { reviewer: { model: 'm1' } } } },
    })
  })

  it('follows the new tip once the lineage advanced past the fork point', async () => {
    const root = await tip('refs/heads/config/default')
    const step = await commit(root, { 'steps/a/001/request.json': '{}' })
    const next = await commit(root, { 'providers.yaml': roles('m2') })
    await setRef('refs/heads/config/default', next)
    const r = await followed(step)
    expect(r).toMatchObject({ ok: true, followed: { kind: 'tip', commit: next } })
    expect(r).toMatchObject({
      ok: true,
      roles: { ok: true, value: { roles: { reviewer: { model: 'm2' } } } },
    })
  })

  it('takes the nearer ancestor as governing whatever the ref order', async () => {
    const root = await tip('refs/heads/config/default')
    const child = await commit(root, { 'providers.yaml': roles('child') })
    await setRef('refs/heads/config/aa-child', child)
    await setRef('refs/heads/config/zz-child', child)
    const step = await commit(child, { 'steps/a/001/request.json': '{}' })
    const r = await followed(step)
    // config/default contains only root; the nearer base is `child`, held by two refs on one commit.
    expect(r).toMatchObject({ ok: true, followed: { kind: 'tip', commit: child } })
  })

  it('skips an unrelated orphan lineage', async () => {
    const orphan = await commit(undefined, { 'providers.yaml': roles('orphan') })
    await setRef('refs/heads/config/orphan', orphan)
    const step = await commit(await tip('refs/heads/config/default'), { x: '1' })
    expect(await followed(step)).toMatchObject({
      ok: true,
      followed: { commit: await tip('refs/heads/config/default') },
    })
  })

  it('refuses a commit that shares no history with any lineage', async () => {
    const stranger = await commit(undefined, { x: '1' })
    expect(await followed(stranger)).toMatchObject({
      ok: false,
      message: expect.stringContaining('no config'),
    })
  })

  it('refuses two incomparable governing candidates', async () => {
    const root = await tip('refs/heads/config/default')
    const left = await commit(root, { 'providers.yaml': roles('l') })
    const right = await commit(root, { 'providers.yaml': roles('r') })
    await setRef('refs/heads/config/left', left)
    await setRef('refs/heads/config/right', right)
    const merge = await commitFiles(repo, { parent: left, files: { x: '1' }, message: 'm' })
    // A commit descending from `left` only: right's base with it is root, an ancestor: no conflict.
    expect(await followed(merge)).toMatchObject({ ok: true })
    // A merge of both sides: two incomparable bases.
    const both = await (
      await import('isomorphic-git')
    ).writeCommit({
      fs: repo.fs,
      gitdir: repo.gitdir,
      commit: {
        tree: (
          await (await import('isomorphic-git')).readCommit({ fs: repo.fs, gitdir: repo.gitdir, oid: left })
        ).commit.tree,
        parent: [left, right],
        author: { name: 't', email: 't@t', timestamp: 0, timezoneOffset: 0 },
        committer: { name: 't', email: 't@t', timestamp: 0, timezoneOffset: 0 },
        message: 'merge\n',
      },
    })
    expect(await followed(both)).toMatchObject({
      ok: false,
      message: expect.stringContaining('neither contains the other'),
    })
  })

  it('holds on the governing commit when lineages diverged after it, and says so', async () => {
    const root = await tip('refs/heads/config/default')
    const step = await commit(root, { 'steps/a/001/request.json': '{}' })
    await setRef('refs/heads/config/default', await commit(root, { 'providers.yaml': roles('d') }))
    await setRef('refs/heads/config/exp', await commit(root, { 'providers.yaml': roles('e') }))
    const r = await followed(step)
    expect(r).toMatchObject({ ok: true, followed: { kind: 'held', commit: root } })
    expect(r).toMatchObject({ ok: true, followed: { note: expect.stringContaining('2 diverged lineages') } })
  })

  it('recomputes only when a config ref moves, not when the agent branch grows', async () => {
    const root = await tip('refs/heads/config/default')
    const reader = new ConfigReader(repo)
    let asked = 0
    const rev = (oid: string) => () => {
      asked++
      return Promise.resolve(oid)
    }
    const s1 = await commit(root, { 'steps/a/001/request.json': '{}' })
    await reader.resolve('agent:a', rev(s1))
    const s2 = await commit(s1, { 'steps/a/002/request.json': '{}' })
    await reader.resolve('agent:a', rev(s2))
    expect(asked).toBe(1)
    await setRef('refs/heads/config/default', await commit(root, { 'providers.yaml': roles('m9') }))
    const r = await reader.resolve('agent:a', rev(s2))
    expect(asked).toBe(2)
    expect(r).toMatchObject({
      ok: true,
      roles: { ok: true, value: { roles: { reviewer: { model: 'm9' } } } },
    })
  })
})

describe('reading the config heads at every step', () => {
  it('sees packed refs, nested names, and a ref moved by rename', async () => {
    const { spawnSync } = await import('node:child_process')
    const reader = new ConfigReader(repo)
    const root = await tip('refs/heads/config/default')
    expect(reader.configHeads()).toEqual([{ ref: 'refs/heads/config/default', oid: root }])
    await setRef('refs/heads/config/team/exp', root)
    expect(reader.configHeads().map((h) => h.ref)).toEqual([
      'refs/heads/config/default',
      'refs/heads/config/team/exp',
    ])
    spawnSync('git', ['-C', repo.gitdir, 'pack-refs', '--all'])
    expect(reader.configHeads().map((h) => h.ref)).toEqual([
      'refs/heads/config/default',
      'refs/heads/config/team/exp',
    ])
    const next = await commit(root, { 'providers.yaml': roles('m3') })
    await setRef('refs/heads/config/default', next)
    expect(reader.configHeads()[0]).toEqual({ ref: 'refs/heads/config/default', oid: next })
  })
})
