/**
 * cli/recover, in process, with no serve running: `recover <ws>` takes the home and commits what
 * waits — journal steps (finished as recovery does) and entries an older holdfast left in
 * quarantine (onto `agents/<agent>.recovered`) — printing one line for each; with nothing to do it
 * says so; a workspace that does not exist is refused; `--json` prints what was done. (Against a
 * running serve and a failing disk: test/proxy/record/recover.faults.test.ts.)
 */
import fs from 'node:fs'
import path from 'node:path'
import { Journal } from '../../proxy/record/journal/writer'
import { git } from '../support/harness'
import { cleanup, homeWithWorkspace } from '../hooks/helpers'
import { requestBytes, sentMeta } from '../proxy/record/steps.support'
import { runCli } from './inprocess.support'

let home: string
let repo: string
beforeAll(async () => {
  ;({ home, repo } = await homeWithWorkspace('proj'))
})
afterAll(() => cleanup())

describe('holdfast recover, with no serve running', () => {
  it('says there is nothing to recover when every step is on its branch', async () => {
    expect(await runCli(['recover', 'proj', '--home', home])).toEqual({
      code: 0,
      stdout: 'proj: nothing to recover (every step is on its branch)\n',
      stderr: '',
    })
  })

  it('commits journal steps and quarantined entries, one line each, and empties what it committed', async () => {
    const journal = new Journal(false)
    const dir = path.join(home, 'workspaces', 'proj', 'journal', 'j')
    for (const n of [1, 2]) journal.agent(dir).send(n, sentMeta('proj', 'j', n), requestBytes(`j${n}`))
    journal.close()
    const q = path.join(home, 'quarantine', 'proj', 'old', '004')
    fs.mkdirSync(q, { recursive: true })
    fs.writeFileSync(path.join(q, 'request.json'), requestBytes('old four'))
    fs.writeFileSync(path.join(q, 'meta.json'), JSON.stringify(sentMeta('proj', 'old', 4)))
    fs.writeFileSync(path.join(q, 'reason.txt'), 'its commit failed\n')
    const r = await runCli(['recover', 'proj', '--home', home])
    expect(r).toEqual({
      code: 0,
      stdout:
        'proj: committed 2 step(s) from the journal\n' +
        'proj/old: step 004 brought back from quarantine onto agents/old.recovered\n',
      stderr: '',
    })
    expect(git(repo, 'show', 'agents/j:steps/j/002/request.json')).toBe(requestBytes('j2').toString())
    expect(git(repo, 'show', 'agents/old.recovered:steps/old.recovered/004/request.json')).toBe(
      requestBytes('old four').toString(),
    )
    expect(fs.existsSync(dir)).toBe(false)
    expect(fs.existsSync(q)).toBe(false)
  })

  it('prints what it did as JSON with --json', async () => {
    const r = await runCli(['recover', 'proj', '--home', home, '--json'])
    expect(r.code).toBe(0)
    expect(JSON.parse(r.stdout)).toEqual({
      refs: [],
      packs: [],
      orphans: [],
      rewound: [],
      committed: 0,
      waiting: [],
      damaged: [],
      gaps: [],
      unrecorded: [],
      quarantined: [],
      brought: [],
      refused: [],
    })
  })

  it('refuses a workspace that does not exist, creating nothing', async () => {
    const r = await runCli(['recover', 'nope', '--home', home])
    expect(r.code).toBe(1)
    expect(r.stderr).toBe(`holdfast: no workspace "nope" in ${home}\n`)
    expect(fs.existsSync(path.join(home, 'workspaces', 'nope'))).toBe(false)
  })
})
