/**
 * record/commit/step-numbers: which step a commit of an agent's branch records. Covers: a step
 * commit's number read from its message, 0 for any other commit (the config root); a number told (a commit just made) is not read again; the commit of step `n`
 * found below a tip, none for a number the branch does not hold.
 */
import fs from 'node:fs'
import { agentRef } from '../../../../proxy/core/layout'
import { commitSteps } from '../../../../proxy/record/commit/step-commits'
import { findStep, knowStep, stepAt } from '../../../../proxy/record/commit/step-numbers'
import { readRef } from '../../../../proxy/store/git'
import { Workspace } from '../../../../proxy/store/workspace'
import { tempHome } from '../../../support/harness'

let home: string
let ws: Workspace
beforeEach(async () => {
  home = tempHome()
  ws = new Workspace(home, 'w')
  await ws.ensure()
})
afterEach(() => fs.rmSync(home, { recursive: true, force: true }))

const step = (agent: string, n: number) => ({
  agent,
  n,
  model: 'm',
  files: { 'meta.json': Buffer.from('{}\n'), 'request.json': Buffer.from(`{"n":${n}}`) },
})

describe('the step a commit records', () => {
  it("is its message's number, with its first parent, and 0 for the config root", async () => {
    const { oids } = await commitSteps(ws.repo, [step('a', 1), step('a', 2)])
    const second = oids.get('a/2') as string
    const at = await stepAt(ws.repo, 'a', second, true)
    expect(at).toEqual({ n: 2, parent: oids.get('a/1') })
    const root = (await readRef(ws.repo, 'refs/heads/config/default')) as string
    expect((await stepAt(ws.repo, 'a', root)).n).toBe(0)
  })

  it('is not read again once told', async () => {
    // A made-up id: reading it would fail, so the told number is the answer.
    knowStep(ws.repo, 'f'.repeat(40), 7)
    expect(await stepAt(ws.repo, 'a', 'f'.repeat(40))).toEqual({ n: 7 })
  })

  it('finds the commit of step n below a tip, and none for a number the branch does not hold', async () => {
    const { oids } = await commitSteps(ws.repo, [step('a', 1), step('a', 2), step('a', 4)])
    const tip = (await readRef(ws.repo, agentRef('a'))) as string
    expect(await findStep(ws.repo, 'a', tip, 2)).toBe(oids.get('a/2'))
    expect(await findStep(ws.repo, 'a', tip, 4)).toBe(tip)
    expect(await findStep(ws.repo, 'a', tip, 3)).toBeUndefined()
    expect(await findStep(ws.repo, 'a', tip, 9)).toBeUndefined()
  })
})
