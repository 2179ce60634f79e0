/**
 * store/home: where holdfast keeps its state. Covers: the home's precedence (`--home`, then
 * `$HOLDFAST_HOME`, then `~/.holdfast`, always absolute), every path under it, that a name which
 * fails core/naming never becomes a path, the step tree directory, and the default lineage's name.
 */
import os from 'node:os'
import path from 'node:path'
import { HoldfastError } from '../../../proxy/core/errors'
import { DEFAULT_LINEAGE, homePaths, resolveHome } from '../../../proxy/store/home'

describe('resolveHome', () => {
  const saved = process.env.HOLDFAST_HOME
  afterEach(() => {
    if (saved === undefined) delete process.env.HOLDFAST_HOME
    else process.env.HOLDFAST_HOME = saved
  })

  it('takes the flag over $HOLDFAST_HOME, and $HOLDFAST_HOME over ~/.holdfast', () => {
    process.env.HOLDFAST_HOME = '/tmp/from-env'
    expect(resolveHome('/tmp/from-flag')).toBe('/tmp/from-flag')
    expect(resolveHome()).toBe('/tmp/from-env')
    delete process.env.HOLDFAST_HOME
    expect(resolveHome()).toBe(path.join(os.homedir(), '.holdfast'))
  })

  it('makes a relative home absolute against the current directory', () => {
    expect(resolveHome('rel/home')).toBe(path.join(process.cwd(), 'rel', 'home'))
    expect(path.isAbsolute(resolveHome('.'))).toBe(true)
  })
})

describe('homePaths', () => {
  const home = '/h'

  it('lays out the files of a home as documented', () => {
    expect(homePaths.config(home)).toBe('/h/holdfast.yaml')
    expect(homePaths.serveJson(home)).toBe('/h/serve.json')
    expect(homePaths.serveLock(home)).toBe('/h/serve.lock')
    expect(homePaths.token(home)).toBe('/h/token')
    expect(homePaths.opsLog(home)).toBe('/h/ops.jsonl')
    expect(homePaths.quarantine(home)).toBe('/h/quarantine')
    expect(homePaths.workspaces(home)).toBe('/h/workspaces')
    expect(homePaths.workspace(home, 'w')).toBe('/h/workspaces/w')
    expect(homePaths.repo(home, 'w')).toBe('/h/workspaces/w/repo.git')
    expect(homePaths.journal(home, 'w')).toBe('/h/workspaces/w/journal')
    expect(homePaths.agentJournal(home, 'w', 'main')).toBe('/h/workspaces/w/journal/main')
  })

  it('refuses a workspace or agent name that would escape its directory or is no ref component', () => {
    for (const ws of ['..', '.', 'a/b', '', 'has space', 'x.lock']) {
      expect(() => homePaths.repo(home, ws)).toThrow(HoldfastError)
      expect(() => homePaths.journal(home, ws)).toThrow(/workspace name/)
    }
    for (const agent of ['..', 'a/b', '-x', 'a\\b']) {
      let err: unknown
      try {
        homePaths.agentJournal(home, 'w', agent)
      } catch (e) {
        err = e
      }
      expect(err).toBeInstanceOf(HoldfastError)
      expect(err).toMatchObject({ code: 'BAD_NAME', message: expect.stringContaining('agent name') })
    }
    expect(() => homePaths.workspace(home, 'x'.repeat(101))).toThrow(/at most 100 bytes/)
  })
})

describe('DEFAULT_LINEAGE', () => {
  it('is "default"', () => {
    expect(DEFAULT_LINEAGE).toBe('default')
  })
})
