/**
 * `holdfast agents`: every agent with steps, a split's parent and kind, totals that equal the sum
 * of its steps, what the hold saved, an unpriced model as unknown; and the lookups every command
 * shares: an unknown workspace or agent is refused naming what exists, and nothing is created.
 */
import { HOLD_SAVED, WRITES_AVOIDED } from '../../proxy/core/saving-words'
import fs from 'node:fs'
import path from 'node:path'
import { agentRows, splitOf } from '../../cli/agents'
import { stepRows } from '../../cli/steps'
import { startProxy, type Proxy } from '../support/harness'
import { cliInProcess } from '../proxy/tools/support'

let p: Proxy
const tool = (name: string) => ({ name, description: `tool ${name}`, input_schema: { type: 'object' } })

async function step(agent: string, model: string, tools: string[], messages: object[]): Promise<void> {
  const res = await fetch(`${p.url}/w/default/a/${agent}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ model, max_tokens: 8, tools: tools.map(tool), messages }),
  })
  expect(res.status).toBe(200)
  await res.arrayBuffer()
}

beforeAll(async () => {
  p = await startProxy()
  const first = { role: 'user', content: 'list the files' }
  const more = [first, { role: 'assistant', content: 'ok' }, { role: 'user', content: 'more' }]
  await step('main', 'claude-sonnet-4-5', ['a', 'b'], [first])
  await step('main', 'claude-sonnet-4-5', ['a'], more) // a subtraction: held
  await step('main.sub-ab12', 'claude-haiku-4-5', [], [{ role: 'user', content: 'explore' }])
  await step('main.aux', 'frontier-model-9', [], [{ role: 'user', content: 'title?' }])
  await p.settled()
})
afterAll(() => p.close())

describe('holdfast agents', () => {
  it('names a split agent’s parent and kind from its name', () => {
    expect(splitOf('main')).toEqual({ parent: null, kind: 'main' })
    expect(splitOf('main.sub-ab12')).toEqual({ parent: 'main', kind: 'subagent' })
    expect(splitOf('main.sub-ab12.sub-cd')).toEqual({ parent: 'main.sub-ab12', kind: 'subagent' })
    expect(splitOf('main.aux')).toEqual({ parent: 'main', kind: 'side' })
    expect(splitOf('main.s-1f2e3d4c')).toEqual({ parent: 'main', kind: 'session' })
  })

  it('lists every agent with its totals equal to the sum of its steps and what the hold saved', async () => {
    const rows = await agentRows(p.home, 'default')
    expect(rows.map((r) => [r.agent, r.parent, r.kind, r.steps])).toEqual([
      ['main', null, 'main', 2],
      ['main.aux', 'main', 'side', 1],
      ['main.sub-ab12', 'main', 'subagent', 1],
    ])
    for (const r of rows) {
      const steps = await stepRows(p.home, 'default', r.agent)
      const sum = (k: 'input' | 'cache_read' | 'cache_write' | 'output'): number =>
        steps.reduce((a, s) => a + (s[k] ?? 0), 0)
      expect([r.input, r.cache_read, r.cache_write, r.output]).toEqual([
        sum('input'),
        sum('cache_read'),
        sum('cache_write'),
        sum('output'),
      ])
      expect(r.first).toBe(steps[0]?.time)
      expect(r.last).toBe(steps[steps.length - 1]?.time)
    }
    const main = rows[0]!
    expect(main.models).toEqual(['claude-sonnet-4-5'])
    expect(main.held_steps).toBe(1)
    expect(main.writes_avoided_tokens).toBeGreaterThan(0)
    expect(main.saved_usd).toBeGreaterThan(0)
    const aux = rows[1]!
    expect(aux).toMatchObject({ cost_usd: 0, unpriced: 1 })
  })

  it('prints a table and JSON, with an unpriced agent’s cost as unknown', async () => {
    const json = await cliInProcess(['agents', 'default', '--json', '--home', p.home])
    expect(JSON.parse(json.stdout)).toEqual(await agentRows(p.home, 'default'))
    const text = await cliInProcess(['agents', 'default', '--wide', '--home', p.home])
    const lines = text.stdout.trimEnd().split('\n')
    expect(lines[0]!.split(/\s{2,}/)).toEqual([
      'agent',
      'parent',
      'kind',
      'steps',
      'first',
      'last',
      'models',
      'input',
      'cache read',
      'cache write',
      'output',
      'cost',
      'held',
      'writes avoided',
      'hold saved',
    ])
    expect(lines[2]).toMatch(/^main\.aux +main +side +1 .*frontier-model-9 .*\$0\.00 \+ 1 unknown/)
  })

  it('fits 100 columns by default and names the saving in the shared words', async () => {
    const text = await cliInProcess(['agents', 'default', '--home', p.home])
    const lines = text.stdout.trimEnd().split('\n')
    expect(lines[0]!.split(/\s{2,}/)).toEqual([
      'agent',
      'kind',
      'steps',
      'last',
      'cost',
      'held',
      WRITES_AVOIDED,
      HOLD_SAVED,
    ])
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(100)
    const main = (await agentRows(p.home, 'default'))[0]!
    expect(lines[1]).toMatch(
      new RegExp(
        `^main +main +2 +\\d\\d-\\d\\d \\d\\d:\\d\\d .* 1 +${main.writes_avoided_tokens} +\\$${main.saved_usd.toFixed(4)}$`,
      ),
    )
  })
})

describe('what a command names', () => {
  it('refuses an unknown workspace naming the ones that exist, and creates nothing', async () => {
    for (const args of [
      ['agents', 'nowhere'],
      ['steps', 'nowhere', 'main'],
      ['why', 'nowhere', 'main', '001'],
      ['cohort', 'nowhere', 'main@001'],
      ['roles', '--ws', 'nowhere'],
      ['config', 'show', 'nowhere'],
    ]) {
      const r = await cliInProcess([...args, '--home', p.home])
      expect(r.code).toBe(1)
      expect(r.stderr).toMatch(/^holdfast: no workspace "nowhere" in .*workspaces in .*: default\n$/)
    }
    expect(fs.existsSync(path.join(p.home, 'workspaces', 'nowhere'))).toBe(false)
  })

  it('refuses an unknown agent naming the agents the workspace has', async () => {
    for (const args of [
      ['steps', 'default', 'ghost'],
      ['why', 'default', 'ghost', '001'],
    ]) {
      const r = await cliInProcess([...args, '--home', p.home])
      expect(r.code).toBe(1)
      expect(r.stderr).toBe(
        'holdfast: no agent "ghost" in workspace "default"; its agents: main, main.aux, main.sub-ab12\n',
      )
    }
  })

  it('refuses config set-role on a workspace that does not exist unless --create is given', async () => {
    const args = ['config', 'set-role', 'fresh', 'reviewer', '--provider', 'anthropic', '--model', 'm']
    const refused = await cliInProcess([...args, '--home', p.home])
    expect(refused.code).toBe(1)
    expect(refused.stderr).toMatch(/no workspace "fresh" .*--create makes it/)
    expect(fs.existsSync(path.join(p.home, 'workspaces', 'fresh'))).toBe(false)
    const created = await cliInProcess([...args, '--create', '--home', p.home])
    expect(created.code).toBe(0)
    expect(created.stdout).toMatch(/role reviewer → anthropic\/m/)
  })

  it('says which workspace roles reads and which exist when --ws is not given', async () => {
    const r = await cliInProcess(['roles', '--home', p.home])
    expect(r.code).toBe(0)
    expect(r.stdout.split('\n')[0]).toMatch(
      /^workspace default \(holdfast.yaml's default; workspaces in .*: default/,
    )
  })
})

describe('holdfast why across conversations', () => {
  it('says when the previous step of the agent came from another Claude Code session', async () => {
    // Without the claude-code plugin, which would have split the second session off.
    const q = await startProxy({ fake: p.fake, config: { plugins: [] } })
    const send = async (session: string, content: string): Promise<void> => {
      const res = await fetch(`${q.url}/w/default/a/mixed/v1/messages`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'anthropic-version': '2023-06-01',
          'x-claude-code-session-id': session,
        },
        body: JSON.stringify({
          model: 'claude-sonnet-4-5',
          max_tokens: 8,
          messages: [{ role: 'user', content }],
        }),
      })
      expect(res.status).toBe(200)
      await res.arrayBuffer()
    }
    try {
      await send('sess-a', 'first conversation')
      await send('sess-b', 'second conversation')
      await q.settled()
      const r = await cliInProcess(['why', 'default', 'mixed', '002', '--home', q.home])
      expect(r.code).toBe(0)
      expect(r.stdout).toContain(
        'step 001 came from another conversation (session sess-a; this step: session sess-b)',
      )
    } finally {
      await q.close()
    }
  })
})
