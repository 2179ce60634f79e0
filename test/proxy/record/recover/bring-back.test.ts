/**
 * record/recover/bring-back: `recoverQuarantine` brings the whole entries an older holdfast left
 * in quarantine onto `agents/<agent>.recovered` with their numbers (a second entry of one number
 * onto `-2`), removing each once it is in git, never touching the live branch; a second run
 * brings nothing.
 */
import fs from 'node:fs'
import path from 'node:path'
import { recoverQuarantine } from '../../../../proxy/record/recover/bring-back'
import type { Workspace } from '../../../../proxy/store/workspace'
import { git, tempHome } from '../../../support/harness'
import { readyWorkspace, requestBytes, sentMeta } from '../steps.support'

let home: string
let ws: Workspace
beforeEach(async () => {
  home = tempHome()
  ws = await readyWorkspace(home, 'w')
})
afterEach(() => fs.rmSync(home, { recursive: true, force: true }))

/** A quarantine entry as an older holdfast wrote it: the step's files and reason.txt. */
function oldEntry(agent: string, name: string, text: string): string {
  const dir = path.join(home, 'quarantine', 'w', agent, name)
  fs.mkdirSync(dir, { recursive: true })
  const n = Number(name.split('.')[0])
  fs.writeFileSync(path.join(dir, 'request.json'), requestBytes(text))
  fs.writeFileSync(path.join(dir, 'meta.json'), JSON.stringify(sentMeta('w', agent, n)))
  fs.writeFileSync(path.join(dir, 'reason.txt'), 'its commit failed: EROFS\n')
  return dir
}

describe('whole entries in quarantine', () => {
  it('are brought onto agents/<agent>.recovered with their numbers, a repeated number onto -2, and removed once in git', async () => {
    const a = oldEntry('r', '003', 'three')
    const b = oldEntry('r', '003.2', 'three, the other')
    const c = oldEntry('r', '005', 'five')
    const r = await recoverQuarantine(ws)
    expect(r.refused).toEqual([])
    expect(r.brought).toEqual([
      { agent: 'r', n: 3, to: 'r.recovered' },
      { agent: 'r', n: 5, to: 'r.recovered' },
      { agent: 'r', n: 3, to: 'r.recovered-2' },
    ])
    const show = (ref: string, p: string): string => git(ws.repo.gitdir, 'show', `${ref}:${p}`)
    expect(show('agents/r.recovered', 'steps/r.recovered/003/request.json')).toBe(
      requestBytes('three').toString(),
    )
    expect(show('agents/r.recovered', 'steps/r.recovered/005/request.json')).toBe(
      requestBytes('five').toString(),
    )
    expect(show('agents/r.recovered-2', 'steps/r.recovered-2/003/request.json')).toBe(
      requestBytes('three, the other').toString(),
    )
    for (const dir of [a, b, c]) expect(fs.existsSync(dir)).toBe(false)
    expect(() => git(ws.repo.gitdir, 'rev-parse', '--verify', '-q', 'agents/r')).toThrow()
    // Nothing left: a second run brings nothing.
    expect(await recoverQuarantine(ws)).toEqual({ brought: [], refused: [] })
  })
})
