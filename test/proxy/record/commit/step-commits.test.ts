/**
 * Step commits as the server makes them (record/commit/step-commits): each agent's steps written into its
 * own chain pack, each its own commit, refs moved by compare-and-swap; what the branch inherits
 * keeps its modes; the agent's own tree keeps git's order as it grows past step 999, and its trees
 * and requests after the first are deltas that git and holdfast's reader resolve; a long
 * conversation's repository stays within twice its final request; a batch edits its own copy of
 * the agent's tree, never the cached one a later batch may build on.
 */
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { CHAIN_MAX, retired } from '../../../../proxy/store/git/chain'
import { MAX_DELTA_DEPTH } from '../../../../proxy/store/git/pack'
import { listDir, readFileAt } from '../../../../proxy/store/git/read'
import { casRef, readRef, RefLocked } from '../../../../proxy/store/git/refs'
import { Lru, type TreeEntry } from '../../../../proxy/store/git/repo'
import { CHAIN_FROM, commitStep, commitSteps } from '../../../../proxy/record/commit/step-commits'
import { Workspace } from '../../../../proxy/store/workspace'
import { Conversation } from '../../../support/conversation'
import { tempHome } from '../../../support/harness'

const git = (repo: string, ...args: string[]): string => {
  const r = spawnSync('git', ['-C', repo, ...args], { encoding: 'utf8' })
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`)
  return r.stdout
}

let home: string
let ws: Workspace
beforeEach(async () => {
  home = tempHome()
  ws = new Workspace(home, 'w')
  await ws.ensure()
})
afterEach(() => fs.rmSync(home, { recursive: true, force: true }))

/** A step to commit: its request and a meta. */
const step = (agent: string, n: number, request: string, model: string | null = 'm') => ({
  agent,
  n,
  model,
  files: { 'meta.json': Buffer.from('{}\n'), 'request.json': Buffer.from(request) },
})

describe('step commits', () => {
  it('writes each step of small requests as its own commit, in order, with the exact bytes, in one shared pack git reads', async () => {
    const packs = (): string[] =>
      fs.readdirSync(path.join(ws.repo.gitdir, 'objects', 'pack')).filter((f) => f.endsWith('.pack'))
    const before = packs().length // the starter config's own pack
    const { oids, failed } = await commitSteps(ws.repo, [
      step('a', 1, '{"x": 2.50}'),
      step('a', 2, '{"x":  12345678901234567890}'),
      step('b', 1, '{"b":1}', null),
    ])
    expect(failed.size).toBe(0)
    expect(git(ws.repo.gitdir, 'log', '--format=%s', 'agents/a').trim().split('\n')).toEqual([
      'step 002: m [a]',
      'step 001: m [a]',
      'config: starter providers.yaml',
    ])
    expect(git(ws.repo.gitdir, 'rev-parse', 'agents/a').trim()).toBe(oids.get('a/2'))
    expect(git(ws.repo.gitdir, 'show', 'agents/a:steps/a/001/request.json')).toBe('{"x": 2.50}')
    expect(git(ws.repo.gitdir, 'ls-tree', '-r', '--name-only', 'agents/a:steps/a/002')).toBe(
      'meta.json\nrequest.json\n',
    )
    expect(git(ws.repo.gitdir, 'show', 'agents/b:steps/b/001/request.json')).toBe('{"b":1}')
    expect(packs()).toHaveLength(before + 1)
    expect(
      fs.readdirSync(path.join(ws.repo.gitdir, 'objects')).filter((d) => /^[0-9a-f]{2}$/.test(d)),
    ).toEqual([]) // no loose objects: one writer, packs only
    git(ws.repo.gitdir, 'fsck', '--strict')
  })

  it('keeps the modes of what the branch inherits (an executable, a symlink) (regression)', async () => {
    const clone = path.join(home, 'clone')
    git(home, 'clone', '-q', ws.repo.gitdir, clone)
    fs.writeFileSync(path.join(clone, 'run.sh'), '#!/bin/sh\n', { mode: 0o755 })
    fs.symlinkSync('run.sh', path.join(clone, 'link'))
    git(clone, 'add', '.')
    git(clone, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'tools')
    git(clone, 'push', '-q', 'origin', 'HEAD:config/default')
    await commitSteps(ws.repo, [step('a', 1, '{}')])
    const modes = git(ws.repo.gitdir, 'ls-tree', 'agents/a')
      .split('\n')
      .filter(Boolean)
      .map((l) =>
        l
          .split(/\s+/)
          .slice(0, 2)
          .concat(l.split('\t')[1] as string),
      )
    expect(modes).toEqual(
      expect.arrayContaining([
        ['100755', 'blob', 'run.sh'],
        ['120000', 'blob', 'link'],
        ['040000', 'tree', 'steps'],
      ]),
    )
    git(ws.repo.gitdir, 'fsck', '--strict')
  })

  it("builds on the branch's current tip, whoever moved it", async () => {
    await commitSteps(ws.repo, [step('a', 1, '{"n":1}')])
    const first = (await readRef(ws.repo, 'refs/heads/agents/a')) as string
    // Someone else commits on the branch (here: a second commit of step 1's tree by plain git).
    const theirs = git(ws.repo.gitdir, 'commit-tree', `${first}^{tree}`, '-p', first, '-m', 'theirs').trim()
    await casRef(ws.repo, 'refs/heads/agents/a', theirs, first)
    const { failed } = await commitSteps(ws.repo, [step('a', 2, '{"n":2}')])
    expect(failed.size).toBe(0)
    expect(git(ws.repo.gitdir, 'log', '--format=%s', '-3', 'agents/a').trim().split('\n')).toEqual([
      'step 002: m [a]',
      'theirs',
      'step 001: m [a]',
    ])
  })

  it('never changes a tree a later batch builds on: a branch moved back to an earlier batch gets that batch’s steps only (regression)', async () => {
    const steps = (ns: number[]) => ns.map((n) => step('a', n, `{"n":${n}}`))
    const tip = async () => (await readRef(ws.repo, 'refs/heads/agents/a')) as string
    await commitSteps(ws.repo, steps([1, 2, 3]))
    const third = await tip()
    await commitSteps(ws.repo, steps([4, 5, 6]))
    // Someone moves the branch back to step 3; the next batch builds on step 3's tree, as cached.
    await casRef(ws.repo, 'refs/heads/agents/a', third, await tip())
    expect((await commitSteps(ws.repo, [step('a', 4, '{"n":"4 again"}')])).failed.size).toBe(0)
    const listed = git(ws.repo.gitdir, 'ls-tree', '--name-only', 'agents/a', 'steps/a/').trim()
    expect(listed.split('\n').map((p) => p.slice('steps/a/'.length))).toEqual(['001', '002', '003', '004'])
    expect(git(ws.repo.gitdir, 'show', 'agents/a:steps/a/004/request.json')).toBe('{"n":"4 again"}')
    git(ws.repo.gitdir, 'fsck', '--strict')
  })

  it('writes each agent tree of a chained agent after the first as a delta, across batches, at most MAX_DELTA_DEPTH deep, and holdfast and git read each', async () => {
    // A first request of CHAIN_FROM bytes gives the agent its chain pack; it keeps it.
    await commitSteps(ws.repo, [step('a', 1, JSON.stringify({ n: 1, pad: 'x'.repeat(CHAIN_FROM) }))])
    const { oids } = await commitSteps(
      ws.repo,
      Array.from({ length: 40 }, (_, i) => step('a', i + 2, `{"n":${i + 2}}`)),
    )
    // Steps 42..71 one batch each, as they come at one step at a time: the chain extended each time.
    for (let n = 42; n <= 71; n++)
      oids.set(
        `a/${n}`,
        (await commitSteps(ws.repo, [step('a', n, `{"n":${n}}`)])).oids.get(`a/${n}`) as string,
      )
    await retired()
    const packDir = path.join(ws.repo.gitdir, 'objects', 'pack')
    const newest = fs
      .readdirSync(packDir)
      .filter((f) => f.endsWith('.idx'))
      .map((f) => path.join(packDir, f))
      .sort((a, b) => fs.statSync(b).mtimeMs - fs.statSync(a).mtimeMs)[0] as string
    const chains = [
      ...git(ws.repo.gitdir, 'verify-pack', '-v', newest).matchAll(/^chain length = (\d+): (\d+)/gm),
    ]
    const deltas = chains.reduce((n, m) => n + Number(m[2]), 0)
    // Every agent tree but the first, less one written whole each time the depth cap is reached.
    expect(deltas).toBeGreaterThanOrEqual(70 - Math.floor(70 / (MAX_DELTA_DEPTH + 1)))
    expect(Math.max(...chains.map((m) => Number(m[1])))).toBe(MAX_DELTA_DEPTH)
    git(ws.repo.gitdir, 'fsck', '--strict')
    // A reader with no cache of what was written resolves each commit's steps directory from the pack.
    const fresh = {
      ...ws.repo,
      cache: {},
      trees: new Lru<readonly TreeEntry[]>(8),
      commitTrees: new Lru<string>(8),
    }
    for (const n of [2, 17, 18, 41, 51, 52, 71]) {
      const listed = await listDir(fresh, oids.get(`a/${n}`) as string, 'steps/a')
      expect(listed?.map((e) => e.name)).toEqual(
        Array.from({ length: n }, (_, i) => String(i + 1).padStart(3, '0')),
      )
    }
    expect(git(ws.repo.gitdir, 'show', 'agents/a:steps/a/041/request.json')).toBe('{"n":41}')
  })

  it('keeps a 150-step conversation within twice its final request, each request a delta on the one before, every object readable', async () => {
    const conv = new Conversation(7)
    const requests: Buffer[] = []
    for (let n = 1; n <= 150; n++) {
      const request = conv.next()
      requests.push(request)
      const files = {
        'meta.json': Buffer.from(`{"n":${n}}\n`),
        'request.json': request,
        'response.sse': Buffer.from(`data: {"n":${n}}\n\n`),
      }
      const { failed } = await commitSteps(ws.repo, [{ agent: 'a', n, model: 'm', files }])
      expect(failed.size).toBe(0)
    }
    await retired()
    const final = requests[149] as Buffer
    const packDir = path.join(ws.repo.gitdir, 'objects', 'pack')
    const onDisk = fs.readdirSync(packDir).reduce((n, f) => n + fs.statSync(path.join(packDir, f)).size, 0)
    expect(final.length).toBeGreaterThan(700_000)
    expect(onDisk).toBeLessThanOrEqual(2 * final.length)
    expect(fs.readdirSync(packDir).filter((f) => f.endsWith('.pack')).length).toBeLessThanOrEqual(
      2 + Math.ceil(onDisk / CHAIN_MAX),
    )
    // git reads every object, and the requests are the bytes sent.
    const all = git(ws.repo.gitdir, 'cat-file', '--batch-all-objects', '--batch-check')
    expect(all).not.toMatch(/missing/)
    expect(all.trim().split('\n').length).toBeGreaterThan(150 * 6)
    git(ws.repo.gitdir, 'fsck', '--strict')
    for (const n of [1, 2, 51, 100, 150]) {
      const shown = spawnSync('git', [
        '-C',
        ws.repo.gitdir,
        'show',
        `agents/a:steps/a/${String(n).padStart(3, '0')}/request.json`,
      ])
      expect(shown.stdout.equals(requests[n - 1] as Buffer)).toBe(true)
    }
    const fresh = {
      ...ws.repo,
      cache: {},
      trees: new Lru<readonly TreeEntry[]>(8),
      commitTrees: new Lru<string>(8),
    }
    const tip = (await readRef(ws.repo, 'refs/heads/agents/a')) as string
    expect((await readFileAt(fresh, tip, 'steps/a/150/request.json'))?.equals(final)).toBe(true)
    expect((await readFileAt(fresh, tip, 'steps/a/077/request.json'))?.equals(requests[76] as Buffer)).toBe(
      true,
    )
  })

  it('answers reads that meet the packs they listed being replaced by the agents’ next commits (regression)', async () => {
    const agents = ['a', 'b', 'c', 'd']
    const committed = new Map<string, number>()
    let writing = true
    const writer = (async () => {
      for (let n = 1; n <= 40; n++) {
        await commitSteps(
          ws.repo,
          agents.map((a) => step(a, n, `{"agent":"${a}","n":${n},"pad":"${'x'.repeat(2000)}"}`)),
        )
        for (const a of agents) committed.set(a, n)
        await new Promise((r) => setTimeout(r, 5))
      }
      writing = false
    })()
    const failures: unknown[] = []
    let reads = 0
    const reader = async (k: number): Promise<void> => {
      while (writing) {
        const a = agents[k % agents.length] as string
        const n = committed.get(a)
        const tip = await readRef(ws.repo, `refs/heads/agents/${a}`)
        if (n && tip) {
          const path_ = `steps/${a}/${String(n).padStart(3, '0')}/request.json`
          await readFileAt(ws.repo, tip, path_).then(
            (b) => b === undefined && failures.push(`${path_} not found`),
            (err: unknown) => failures.push(err),
          )
          reads++
        }
        await new Promise((r) => setImmediate(r))
      }
    }
    await Promise.all([writer, ...Array.from({ length: 6 }, (_, k) => reader(k))])
    expect(failures).toEqual([])
    expect(reads).toBeGreaterThan(10)
  })

  it("keeps the agent's tree in git's order as it grows past 999 steps, and git reads every step and every commit's tree", async () => {
    const batch = Array.from({ length: 1005 }, (_, i) => step('a', i + 1, `{"n":${i + 1}}`))
    for (let i = 0; i < batch.length; i += 250) await commitSteps(ws.repo, batch.slice(i, i + 250))
    git(ws.repo.gitdir, 'fsck', '--strict')
    const names = git(ws.repo.gitdir, 'ls-tree', '--name-only', 'agents/a', 'steps/a/').trim().split('\n')
    expect(names).toHaveLength(1005)
    expect(git(ws.repo.gitdir, 'show', 'agents/a:steps/a/1000/request.json')).toBe('{"n":1000}')
    expect(git(ws.repo.gitdir, 'show', 'agents/a:steps/a/100/request.json')).toBe('{"n":100}')
    expect(git(ws.repo.gitdir, 'show', 'agents/a~1004:steps/a/001/request.json')).toBe('{"n":1}')
    // Each commit of a batch holds exactly the steps up to its own, in git's byte order (step 1002:
    // made from step 1001's tree by inserting between 100 and 101, not at the end).
    const at1002 = git(ws.repo.gitdir, 'ls-tree', '--name-only', 'agents/a~3', 'steps/a/').trim().split('\n')
    const want = Array.from({ length: 1002 }, (_, i) => `steps/a/${String(i + 1).padStart(3, '0')}`).sort()
    expect(at1002).toEqual(want)
  })
})

describe('commitStep', () => {
  it('commits one step and returns the commit id git has at the branch tip', async () => {
    const oid = await commitStep(ws.repo, step('main', 1, '{"n":1}'))
    expect(git(ws.repo.gitdir, 'rev-parse', 'agents/main').trim()).toBe(oid)
    expect(git(ws.repo.gitdir, 'show', `${oid}:steps/main/001/request.json`)).toBe('{"n":1}')
  })

  it('throws when the branch is locked by another writer, and moves nothing', async () => {
    const first = await commitStep(ws.repo, step('main', 1, '{"n":1}'))
    const lock = path.join(ws.repo.gitdir, 'refs/heads/agents/main.lock')
    fs.writeFileSync(lock, '')
    await expect(commitStep(ws.repo, step('main', 2, '{"n":2}'))).rejects.toBeInstanceOf(RefLocked)
    expect(git(ws.repo.gitdir, 'rev-parse', 'agents/main').trim()).toBe(first)
    fs.rmSync(lock)
    await commitStep(ws.repo, step('main', 2, '{"n":2}'))
    expect(await ws.committedSteps('main')).toBe(2)
  }, 10_000)
})
