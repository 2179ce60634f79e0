/**
 * Loaded tools a harness declares itself (DESIGN §7 amended: no injection for a harness on the
 * endpoint): a harness connected to the agent's MCP endpoint declares `mcp__holdfast__<presented>`
 * once it listed again; compose injects nothing for it, before or after, and meta.json says the
 * harness declared it. When the tool is unloaded and the harness drops
 * it, the hold re-sends the previous tools array and `why` says so; once the hold no longer
 * applies, the history closure declares the harness's name with its refusal.
 */
import { why } from '../../../cli/why'
import * as say from '../../../proxy/core/tool-sentences'
import { startProxy, type Proxy } from '../../support/harness'
import { meta } from '../../plugins/support'
import { cliInProcess, stdioClient } from '../tools/support'

let p: Proxy
beforeAll(async () => {
  p = await startProxy({ config: { clients: { fx: { ...stdioClient(), workspaces: ['hd'] } } } })
})
afterAll(() => p.close())

const tool = (name: string) => ({ name, description: `the ${name} tool`, input_schema: { type: 'object' } })
const HARNESS = ['Read', 'mcp__holdfast__clients'].map(tool)
const ECHO = tool('mcp__holdfast__fx_echo')

async function step(agent: string, body: object): Promise<void> {
  const res = await fetch(`${p.url}/w/hd/a/${agent}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 16, system: 'terse', ...body }),
  })
  expect(res.status).toBe(200)
  await res.arrayBuffer()
}

async function cli(...args: string[]): Promise<string> {
  const r = await cliInProcess([...args, '--home', p.home])
  expect(r.stderr).toBe('')
  return r.stdout
}

const lastSent = () => p.fake.received.at(-1)!.body
const namesSent = (): string[] =>
  (JSON.parse(lastSent().toString()) as { tools: { name: string }[] }).tools.map((t) => t.name)

describe('a loaded tool the harness declares itself', () => {
  it('is not injected again: the request goes byte for byte and meta.json names it as the harness’s', async () => {
    await cli('clients', 'load', 'hd', 'a1', 'fx', 'echo')
    const body = {
      tools: [...HARNESS, ECHO],
      messages: [{ role: 'user', content: 'hi' }],
    }
    await step('a1', body)
    const sent = JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 16, system: 'terse', ...body })
    expect(lastSent().toString()).toBe(sent)
    await p.settled()
    const m = meta(p.repo('hd'), 'a1', '001')
    expect(m.injected_tools).toEqual([])
    expect(m.harness_tools).toEqual(['mcp__holdfast__fx_echo'])
    expect(m.changes).toEqual([])
    const report = await why(p.home, 'hd', 'a1', '001')
    expect(report.summary).toContain(
      'loaded tools the harness declared itself (not injected): mcp__holdfast__fx_echo',
    )
  })

  it('is not injected for a harness on the endpoint that has not listed it yet: that name could not run', async () => {
    await cli('clients', 'load', 'hd', 'a0', 'fx', 'echo')
    const body = { tools: HARNESS, messages: [{ role: 'user', content: 'hi' }] }
    await step('a0', body)
    expect(namesSent()).toEqual(['Read', 'mcp__holdfast__clients'])
    expect(lastSent().toString()).toBe(
      JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 16, system: 'terse', ...body }),
    )
    await p.settled()
    expect(meta(p.repo('hd'), 'a0', '001').injected_tools).toEqual([])
  })

  it('is held when the harness drops it after an unload, then closed under the harness’s name', async () => {
    await cli('clients', 'load', 'hd', 'a2', 'fx', 'echo')
    const turns: object[] = [{ role: 'user', content: 'echo hi' }]
    await step('a2', { tools: [...HARNESS, ECHO], messages: turns })
    turns.push(
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 't1', name: ECHO.name, input: { text: 'hi' } }],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'hi' }] },
    )
    expect(await cli('clients', 'unload', 'hd', 'a2', 'fx', 'echo')).toMatch(/^unloaded fx_echo from hd\/a2/)
    // The harness saw tools/list_changed and dropped the tool: the hold re-sends the previous array.
    await step('a2', { tools: HARNESS, messages: turns })
    expect(namesSent()).toEqual(['Read', 'mcp__holdfast__clients', 'mcp__holdfast__fx_echo'])
    await p.settled()
    const m = meta(p.repo('hd'), 'a2', '002')
    expect(m.hold).toEqual({ applied: true, reason: 'applied', held: ['mcp__holdfast__fx_echo'] })
    expect((await why(p.home, 'hd', 'a2', '002')).summary).toContain(
      "the client dropped mcp__holdfast__fx_echo; the hold re-sent step 001's array",
    )
    // A new system prompt ends the hold; the transcript still calls the tool: it is closed.
    await step('a2', { system: 'verbose', tools: HARNESS, messages: turns })
    const closure = (JSON.parse(lastSent().toString()) as { tools: { name: string; description: string }[] })
      .tools[2]
    expect(closure).toEqual({
      name: 'mcp__holdfast__fx_echo',
      description: say.notLoaded('mcp__holdfast__fx_echo'),
      input_schema: { type: 'object' },
    })
  })
})
