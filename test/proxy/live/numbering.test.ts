/**
 * live/numbering: how far an agent's numbering went by what survives outside its branch. Each
 * witness counts on its own (push.json, the remote's copy as last fetched, the reflog, a journal
 * file's name), the highest wins, and every witness naming it is said; a copy under another
 * agent's name, or a commit that is not a step, counts for nothing.
 */
import fs from 'node:fs'
import path from 'node:path'
import { highestTold } from '../../../proxy/live/numbering'
import { ownTrackingRef } from '../../../proxy/remote/refs'
import { writePushState } from '../../../proxy/remote/state'
import { casRef, commitFiles, readRef } from '../../../proxy/store/git'
import { appendReflog } from '../../../proxy/store/git/reflog'
import { Workspace } from '../../../proxy/store/workspace'
import { tempHome } from '../../support/harness'

let home: string
let ws: Workspace
let root: string
beforeEach(async () => {
  home = tempHome()
  ws = new Workspace(home, 'w')
  await ws.ensure()
  root = (await readRef(ws.repo, 'refs/heads/config/default')) as string
})
afterEach(() => fs.rmSync(home, { recursive: true, force: true }))

const journal = (): string => ws.agentJournal('main')
const pushed = (step: number) =>
  writePushState(home, 'w', {
    url: 'u',
    machine: 'm',
    form: 'custom',
    agents: { main: { step, commit: 'f'.repeat(40), at: 't' } },
    refused: {},
    last_ok_at: 't',
    last_error: null,
  })
/** A copy of the remote's tip as a heal's fetch leaves it (`message` its subject). */
async function fetched(form: 'custom' | 'heads', message: string): Promise<void> {
  const c = await commitFiles(ws.repo, { parent: root, files: { x: message }, message })
  await casRef(ws.repo, ownTrackingRef(form, 'main'), c, null)
}

test('says nothing was given when no witness survives', async () => {
  expect(await highestTold(ws, 'main', journal())).toEqual({ n: 0, by: [] })
})

test('each witness counts on its own: push.json, the remote copy, the reflog, a journal file name', async () => {
  await pushed(4)
  expect((await highestTold(ws, 'main', journal())).by).toEqual(['the remote was told of step 004'])
  await fetched('heads', 'step 009: m [main]\n')
  expect(await highestTold(ws, 'main', journal())).toEqual({
    n: 9,
    by: ["the remote's copy, as last fetched, ends at step 009"],
  })
  appendReflog(ws.repo.gitdir, 'refs/heads/agents/main', null, root, 'step 012: m [main]')
  expect((await highestTold(ws, 'main', journal())).n).toBe(12)
  fs.mkdirSync(journal(), { recursive: true })
  fs.writeFileSync(path.join(journal(), '015.log'), Buffer.alloc(64)) // zeroed by a cut: its name stays
  expect(await highestTold(ws, 'main', journal())).toEqual({
    n: 15,
    by: ['a journal file is named after step 015'],
  })
})

test('names every witness that says the highest number', async () => {
  await pushed(18)
  appendReflog(ws.repo.gitdir, 'refs/heads/agents/main', null, root, 'step 018: m [main]')
  expect((await highestTold(ws, 'main', journal())).by).toEqual([
    'the remote was told of step 018',
    "the branch's reflog names step 018",
  ])
})

test("a remote copy under another agent's name, or not a step commit, counts for nothing", async () => {
  await fetched('custom', 'step 030: m [other]\n')
  await fetched('heads', 'config: something\n')
  expect((await highestTold(ws, 'main', journal())).n).toBe(0)
})
