/**
 * No orphan pack files (issue 41, item 4): a process killed while it writes or removes packs
 * (test/support/crash-points.ts kills itself at the named moment) leaves files no pack index
 * names; the next start's recovery removes every one of them before anything writes, says how
 * many and which in one line, and removes nothing git reads: every step committed before the kill
 * is still read by real git, and `git fsck --strict` finds nothing wrong.
 */
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { describeRecovery, recoverWorkspace } from '../../../proxy/record/recover'
import { silentLogger } from '../../../proxy/process/log'
import { Workspace } from '../../../proxy/store/workspace'
import { git, REGISTER, ROOT, tempHome } from '../../support/harness'
import { fsckProblems } from '../../support/repo-checks'

const CHILD = path.join(ROOT, 'test', 'support', 'crash-points.ts')

let home: string
beforeEach(() => {
  home = tempHome()
})
afterEach(() => fs.rmSync(home, { recursive: true, force: true }))

const gitdir = (): string => path.join(home, 'workspaces', 'default', 'repo.git')
const packDir = (): string => path.join(gitdir(), 'objects', 'pack')

/** Run the crash-point child; resolves with the signal that ended it (null when it exited). */
function crashAt(point: string, agents: string[], steps: number): NodeJS.Signals | null {
  const r = spawnSync(
    process.execPath,
    ['-r', REGISTER, CHILD, point, home, agents.join(','), String(steps)],
    {
      encoding: 'utf8',
      timeout: 60_000,
    },
  )
  if (r.status !== null && r.status !== 0)
    throw new Error(`crash-points ${point} exited ${r.status}: ${r.stderr}`)
  return r.signal
}

/** Files of the pack directory no index names: a pack without its index, a temp file, a `.rev` without its pack. */
function orphans(): string[] {
  const files = fs.existsSync(packDir()) ? fs.readdirSync(packDir()) : []
  const present = new Set(files)
  return files
    .filter((f) => {
      if (f.startsWith('tmp_')) return true
      const m = /^(pack-[0-9a-f]{40})\.(pack|rev|bitmap)$/.exec(f)
      if (!m) return false
      return m[2] === 'pack' ? !present.has(`${m[1]}.idx`) : !present.has(`${m[1]}.pack`)
    })
    .sort()
}

/** Start again as serve does (recovery before anything writes); the lines it logs. */
async function startAgain(): Promise<{ orphans: string[]; lines: string[] }> {
  const r = await recoverWorkspace(new Workspace(home, 'default'), silentLogger())
  return { orphans: r.orphans, lines: describeRecovery('default', r).map((l) => l.line) }
}

/** Every step 001..`n` of each agent reads with real git, and fsck is clean. */
async function expectReadable(agents: string[], n: number): Promise<void> {
  for (const agent of agents)
    for (let s = 1; s <= n; s++) {
      const step = String(s).padStart(3, '0')
      const body = git(
        gitdir(),
        'cat-file',
        '-p',
        `refs/heads/agents/${agent}:steps/${agent}/${step}/request.json`,
      )
      expect(JSON.parse(body)).toMatchObject({ agent, n: s })
    }
  expect(await fsckProblems(gitdir())).toBe('')
}

describe('a start after a kill', () => {
  it('removes the temp file of a pack killed before it took its name, and keeps every step', async () => {
    expect(crashAt('before-pack-rename', ['a'], 3)).toBe('SIGKILL')
    const left = orphans()
    expect(left).toEqual([expect.stringMatching(/^tmp_pack_hf/)])
    const again = await startAgain()
    expect(again.orphans.sort()).toEqual(left)
    expect(orphans()).toEqual([])
    expect(again.lines).toContainEqual(
      expect.stringMatching(/^default: removed 1 orphan pack file: tmp_pack_hf/),
    )
    await expectReadable(['a'], 2)
  }, 60_000)

  it('removes a pack killed between its rename and its index, and keeps every step', async () => {
    expect(crashAt('between-renames', ['a', 'b'], 3)).toBe('SIGKILL')
    const left = orphans()
    // The pack, and the temp file its index was written to.
    expect(left).toEqual([
      expect.stringMatching(/^pack-[0-9a-f]{40}\.pack$/),
      expect.stringMatching(/^tmp_pack_hf/),
    ])
    const again = await startAgain()
    expect(again.orphans).toEqual(left)
    expect(orphans()).toEqual([])
    await expectReadable(['a', 'b'], 2)
  }, 60_000)

  it("removes a chain's replaced pack killed after its index went, and keeps every step", async () => {
    expect(crashAt('removal-round', ['a', 'b'], 3)).toBe('SIGKILL')
    const left = orphans()
    expect(left).toHaveLength(1)
    const again = await startAgain()
    expect(again.orphans).toEqual(left)
    expect(orphans()).toEqual([])
    await expectReadable(['a', 'b'], 3)
  }, 60_000)

  it("removes a merge's replaced pack killed after its index went, and keeps every step", async () => {
    expect(crashAt('none', ['a', 'b', 'c'], 2)).toBeNull()
    const packsBefore = fs.readdirSync(packDir()).filter((f) => f.endsWith('.pack')).length
    expect(crashAt('merge-removal', [], 0)).toBe('SIGKILL')
    const left = orphans()
    expect(left).toHaveLength(1)
    expect(fs.readdirSync(packDir()).filter((f) => f.endsWith('.pack')).length).toBe(packsBefore + 1)
    const again = await startAgain()
    expect(again.orphans).toEqual(left)
    expect(orphans()).toEqual([])
    await expectReadable(['a', 'b', 'c'], 2)
  }, 60_000)

  it('removes nothing when nothing was killed', async () => {
    expect(crashAt('none', ['a', 'b'], 3)).toBeNull()
    const files = fs.readdirSync(packDir()).sort()
    const again = await startAgain()
    expect(again.orphans).toEqual([])
    expect(again.lines.filter((l) => l.includes('orphan'))).toEqual([])
    expect(fs.readdirSync(packDir()).sort()).toEqual(files)
    await expectReadable(['a', 'b'], 3)
  }, 60_000)
})
