/**
 * view/fork: the form offers the roles at the step's followed config with the model that will run
 * and the skills of the pool; a step that is no notch yet says why; firing is `holdfast attempt`'s
 * own, so an undeclared role is refused with the dispatcher's sentence and the others still fire.
 */
import fs from 'node:fs'
import path from 'node:path'
import { Workspace } from '../../../proxy/store/workspace'
import { fireFork, forkForm, forkOptions, skillsPool } from '../../../proxy/view/fork'
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream'
import { startProxy, type Proxy } from '../../support/harness'
import { KEY_ENV, keyedRows, recordDemo } from '../../support/view-demo'

let fake: FakeUpstream
let p: Proxy
beforeAll(async () => {
  process.env[KEY_ENV] = 'sk-view'
  fake = await startFakeUpstream()
  p = await startProxy({ fake, config: { providers: keyedRows(fake.anthropicBaseUrl) } })
  await recordDemo(p, 'demo')
  fs.mkdirSync(path.join(p.home, 'skills', 'review'), { recursive: true })
  fs.writeFileSync(path.join(p.home, 'skills', 'review', 'SKILL.md'), 'Review carefully.')
  fs.mkdirSync(path.join(p.home, 'skills', 'empty'), { recursive: true })
})
afterAll(async () => {
  await p.close()
  await fake.close()
})

describe('the form', () => {
  it('offers the roles declared at the step’s config with their models, and the pool’s skills', async () => {
    expect(skillsPool(p.home)).toEqual(['review'])
    const o = await forkOptions(new Workspace(p.home, 'demo'), p.server.ctx.config, 'main', 2)
    expect(o).toMatchObject({
      notch: 'main@002',
      roles: [
        { role: 'reviewer', provider: 'keyed', model: 'claude-haiku-4-5' },
        { role: 'writer', provider: 'keyed', model: 'claude-opus-4-5' },
      ],
      skills: ['review'],
    })
    const html = forkForm(o, '/ui/w/demo/a/main/s/002/fork', 'v').text
    expect(html).toContain('<input type="hidden" name="form" value="v"')
    expect(html).toContain('value="reviewer"')
    expect(html).toMatch(/<code>claude-opus-4-5<\/code\s*>/)
  })

  it('says why a step that is not committed cannot be a notch', async () => {
    const o = await forkOptions(new Workspace(p.home, 'demo'), p.server.ctx.config, 'main', 99)
    expect(o).toEqual({ refusal: 'this step is not committed yet: a notch is a committed step' })
    expect(forkForm(o, '/x', 'v').text).not.toContain('<form')
  })
})

describe('firing', () => {
  it('fires the declared roles as holdfast attempt does and says which role was refused', async () => {
    fake.enqueue({ text: 'fine', times: 1 })
    const fired = await fireFork(p.home, p.server.ctx.config, {
      ws: 'demo',
      agent: 'main',
      n: 2,
      roles: ['reviewer', 'ghost'],
      goal: 'Check it.',
      skills: ['review'],
    })
    expect(fired.outcomes.get('ghost')?.refused).toMatch(
      /^role "ghost" is not declared at the followed config of [0-9a-f]{40} .*declared roles: reviewer, writer$/,
    )
    expect(fired.outcomes.get('reviewer')?.child).toMatch(/^main-\d{8}T\d{6}Z-/)
    await fired.done
    await p.settled()
    const rows = fs
      .readFileSync(path.join(p.home, 'ops.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { argv: string[]; exit: number; origin: string })
    const reviewer = rows.find((r) => r.argv.includes('reviewer'))
    expect(reviewer).toMatchObject({ exit: 0, origin: 'http' })
    expect(reviewer?.argv).toEqual(expect.arrayContaining(['--goal', 'Check it.', '--pin']))
  })
})
