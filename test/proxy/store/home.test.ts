/**
 * store/home: where holdfast keeps its state. Covers: the home's precedence (`--home`, then
 * `$HOLDFAST_HOME`, then `~/.holdfast`, always absolute), every path under it, that a name which
 * fails core/naming never becomes a path, the step tree directory, and the default lineage's name;
 * and when the home (or the directory `workspaces/` links to) lets other local users at the records.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { HoldfastError } from '../../../proxy/core/errors'
import { DEFAULT_LINEAGE, exposedHome, homePaths, resolveHome } from '../../../proxy/store/home'

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

;(process.platform === 'win32' ? describe.skip : describe)('exposedHome', () => {
  let base: string
  let home: string
  beforeEach(() => {
    base = fs.mkdtempSync(path.join(os.tmpdir(), 'hf-home-'))
    home = path.join(base, 'home')
    fs.mkdirSync(home, { mode: 0o700 })
  })
  afterEach(() => fs.rmSync(base, { recursive: true, force: true }))

  it('names nothing for a home of mode 0700, whatever the mode of the workspaces directory in it, or an absent home', () => {
    fs.mkdirSync(homePaths.workspaces(home))
    fs.chmodSync(homePaths.workspaces(home), 0o755) // behind a closed home: nobody else gets there
    expect(exposedHome(home)).toEqual([])
    expect(exposedHome(path.join(base, 'absent'))).toEqual([])
  })

  it.each([
    ['0755', 'group and others (mode 0755: they can list and enter it, and so read every record under it)'],
    ['0750', 'group (mode 0750: they can list and enter it, and so read every record under it)'],
    ['0701', 'others (mode 0701: they can enter it, and so read every record under it)'],
    ['0740', 'group (mode 0740: they can list it)'],
  ])(
    'names a home of mode %s: open to %s, with chmod 700 as the fix, and leaves the mode alone',
    (mode, said) => {
      fs.chmodSync(home, parseInt(mode, 8))
      expect(exposedHome(home)).toEqual([`${home} is open to ${said}; run: chmod 700 ${home}`])
      expect((fs.statSync(home).mode & 0o777).toString(8)).toBe(mode.slice(1))
    },
  )

  it('names the directory workspaces/ links to when it is open, even under a closed home', () => {
    const elsewhere = path.join(base, 'records')
    fs.mkdirSync(elsewhere)
    fs.chmodSync(elsewhere, 0o755)
    fs.symlinkSync(elsewhere, homePaths.workspaces(home))
    const ws = homePaths.workspaces(home)
    expect(exposedHome(home)).toEqual([
      `${ws} is open to group and others (mode 0755: they can list and enter it, and so read every record under it); run: chmod 700 ${ws}`,
    ])
    fs.chmodSync(elsewhere, 0o700)
    expect(exposedHome(home)).toEqual([])
  })
})
