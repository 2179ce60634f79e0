/**
 * record/recover/quarantine: damaged journal bytes are copied aside byte for byte, once, named by
 * their place and (when legible) their step; every number the quarantine names counts as given
 * out; whole entries (an older holdfast's, or an agent name that can never be a branch) are
 * listed. (Bringing them back: bring-back.test.ts.)
 */
import fs from 'node:fs'
import path from 'node:path'
import { Journal } from '../../../../proxy/record/journal/writer'
import { readJournal, segmentFiles } from '../../../../proxy/record/journal/reader'
import { keepDamage, quarantineEntries, reservedUpTo } from '../../../../proxy/record/recover/quarantine'
import type { Workspace } from '../../../../proxy/store/workspace'
import { tempHome } from '../../../support/harness'
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

describe('damaged journal bytes', () => {
  it('are copied aside byte for byte once, named by file, place and step, and their step counts as given out', () => {
    const dir = ws.agentJournal('a')
    const journal = new Journal(false)
    for (let n = 1; n <= 3; n++) journal.agent(dir).send(n, sentMeta('w', 'a', n), requestBytes(`s${n}`))
    journal.close()
    const file = segmentFiles(dir)[0]!.file
    fs.truncateSync(file, fs.statSync(file).size - 5) // step 3's frame torn
    const read = readJournal(dir)
    const kept = keepDamage(ws, 'a', read)
    expect(kept).toHaveLength(1)
    expect(path.basename(kept[0]!.kept)).toMatch(/^001@\d+-003\.bin$/)
    const d = read.damage[0]!
    expect(
      fs.readFileSync(kept[0]!.kept).equals(fs.readFileSync(file).subarray(d.offset, d.offset + d.length)),
    ).toBe(true)
    expect(fs.readFileSync(kept[0]!.kept.replace(/\.bin$/, '.txt'), 'utf8')).toMatch(
      /torn bytes of .* \(step 003/,
    )
    const mtime = fs.statSync(kept[0]!.kept).mtimeMs
    keepDamage(ws, 'a', read) // a second start finds them there
    expect(fs.statSync(kept[0]!.kept).mtimeMs).toBe(mtime)
    expect(reservedUpTo(ws, 'a')).toBe(3)
  })
})

describe('whole entries', () => {
  it('are listed by agent and number and count as given out', () => {
    oldEntry('b', '004', 'four')
    oldEntry('b', '004.2', 'four again')
    oldEntry('a', '007', 'seven')
    expect(quarantineEntries(ws).map((e) => [e.agent, e.n])).toEqual([
      ['a', 7],
      ['b', 4],
      ['b', 4],
    ])
    expect(reservedUpTo(ws, 'b')).toBe(4)
    expect(reservedUpTo(ws, 'none')).toBe(0)
  })
})
