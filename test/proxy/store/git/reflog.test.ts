/**
 * store/git/reflog: reflogs as git writes them. Covers: a line per move that asks for one, which
 * git reads, read back newest first; a torn tail skipped; with `durable` the line (and a new
 * file's directory entry) flushed, without it not; a line the disk refuses is answered false and
 * the move stands.
 */
import fs from 'node:fs'
import path from 'node:path'
import { commitFiles } from '../../../../proxy/store/git'
import {
  appendReflog,
  HEAL_REFLOG_PREFIX,
  highestInReflog,
  readReflog,
} from '../../../../proxy/store/git/reflog'
import { casRef } from '../../../../proxy/store/git/refs'
import type { Repo } from '../../../../proxy/store/git/repo'
import { git, configRepo } from '../git.support'

let dir: string
let gitdir: string
let repo: Repo
let root: string
let other: string

beforeEach(async () => {
  ;({ dir, gitdir, repo, root } = await configRepo('holdfast-reflog-'))
  other = await commitFiles(repo, { parent: root, files: { f: 'x' }, message: 'other' })
})
afterEach(() => {
  jest.restoreAllMocks()
  fs.rmSync(dir, { recursive: true, force: true })
})

describe('the reflog', () => {
  it("names the highest step the branch went to, a heal's line counted like a commit's, whatever its tip says now", async () => {
    expect(highestInReflog(gitdir, 'refs/heads/agents/h')).toBe(0)
    await casRef(repo, 'refs/heads/agents/h', root, null, { reflog: 'step 001: m [h]' })
    await casRef(repo, 'refs/heads/agents/h', other, root, { reflog: `${HEAL_REFLOG_PREFIX}step 018: m [h]` })
    await casRef(repo, 'refs/heads/agents/h', root, other, { reflog: 'holdfast: moved back: unreadable' })
    expect(highestInReflog(gitdir, 'refs/heads/agents/h')).toBe(18)
  })

  it('gets a line per move that asks for one, which git reads, and reads back newest first', async () => {
    await casRef(repo, 'refs/heads/agents/r', root, null, { reflog: 'step 001: m [r]' })
    await casRef(repo, 'refs/heads/agents/r', other, root, { reflog: 'step 002: m [r]\nbody' })
    expect(git(gitdir, 'reflog', '--format=%gs', 'agents/r').trim().split('\n')).toEqual([
      'step 002: m [r]',
      'step 001: m [r]',
    ])
    expect(readReflog(gitdir, 'refs/heads/agents/r')).toEqual([
      { from: root, to: other, message: 'step 002: m [r]' },
      { from: '0'.repeat(40), to: root, message: 'step 001: m [r]' },
    ])
  })

  it('skips lines that do not read as reflog lines (a torn tail), and reads none for a ref without one', () => {
    appendReflog(gitdir, 'refs/heads/agents/t', null, root, 'step 001: m [t]')
    fs.appendFileSync(path.join(gitdir, 'logs', 'refs', 'heads', 'agents', 't'), '\0\0\0garbage')
    expect(readReflog(gitdir, 'refs/heads/agents/t')).toHaveLength(1)
    expect(readReflog(gitdir, 'refs/heads/agents/none')).toEqual([])
  })

  it("flushes the line, and a new reflog file's directory entry, when durable; not otherwise", async () => {
    const flushed = jest.spyOn(fs, 'fdatasyncSync')
    const dirs = jest.spyOn(fs, 'fsyncSync')
    expect(appendReflog(gitdir, 'refs/heads/agents/q', null, root, 'step 001: m [q]')).toBe(true)
    expect(flushed).not.toHaveBeenCalled()
    expect(
      appendReflog(gitdir, 'refs/heads/agents/d', null, root, 'step 001: m [d]', { durable: true }),
    ).toBe(true)
    expect(flushed).toHaveBeenCalledTimes(1)
    expect(dirs).toHaveBeenCalledTimes(1) // the new file's directory
    await casRef(repo, 'refs/heads/agents/d', other, null, { reflog: 'step 002: m [d]', durable: true })
    expect(flushed).toHaveBeenCalledTimes(2)
    expect(readReflog(gitdir, 'refs/heads/agents/d')).toHaveLength(2)
  })

  it('answers false for a line the disk refuses, and the move stands', async () => {
    fs.mkdirSync(path.join(gitdir, 'logs', 'refs', 'heads'), { recursive: true })
    fs.writeFileSync(path.join(gitdir, 'logs', 'refs', 'heads', 'agents'), 'a file where a directory goes')
    expect(appendReflog(gitdir, 'refs/heads/agents/x', null, root, 'step 001: m [x]')).toBe(false)
    await casRef(repo, 'refs/heads/agents/x', root, null, { reflog: 'step 001: m [x]' })
    expect(git(gitdir, 'rev-parse', 'agents/x').trim()).toBe(root)
  })
})
