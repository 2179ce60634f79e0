/**
 * Loaded tools end to end, from the CLI against a running proxy and the fake upstream: load two
 * tools, make a step, unload one, make a step with a grown transcript → the provider receives the
 * previous tools array (held) and `holdfast why` says so; then, when the hold no longer applies,
 * the history closure declares the gone tool with its refusal.
 */
import { why } from '../../../cli/why'
import { scanTopLevel } from '../../../proxy/core/json-scan'
import * as say from '../../../proxy/core/tool-sentences'
import { startProxy, type Proxy } from '../../support/harness'
import { cliAsync, type Run } from '../../support/repo-checks'
import { cliInProcess, stdioClient } from './support'

let p: Proxy
beforeAll(async () => {
  p = await startProxy({ config: { clients: { fx: { ...stdioClient(), workspaces: ['default'] } } } })
})
afterAll(() => p.close())

const run = (...args: string[]): Promise<Run> => cliAsync([...args, '--home', p.home], { HOLDFAST_TOKEN: '' })
function ok(r: { code: number | null; stdout: string; stderr: string }): string {
  expect(r.stderr).toBe('')
  expect(r.code).toBe(0)
  return r.stdout
}

const READ = { name: 'Read', description: 'read a file', input_schema: { type: 'object' } }
type Tool = { name: string; description: string }

async function step(body: object): Promise<{ content: unknown[] }> {
  const res = await fetch(`${p.url}/w/default/a/main/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 16, tools: [READ], ...body }),
  })
  expect(res.status).toBe(200)
  return (await res.json()) as { content: unknown[] }
}

function toolsBytes(body: Buffer): Buffer {
  const top = scanTopLevel(body)
  if (!top.ok) throw new Error(top.error)
  const span = top.keys.get('tools')
  if (!span) throw new Error('no tools')
  return body.subarray(span.valueStart, span.valueEnd)
}

const sentTools = (i: number): Tool[] =>
  (JSON.parse(p.fake.received[i]!.body.toString()) as { tools: Tool[] }).tools

describe('loaded tools end to end', () => {
  it('holds the unloaded tool while the prefix is intact, says so in why, then closes the history', async () => {
    expect(ok(await run('clients', 'load', 'default', 'main', 'fx', 'echo', 'shout'))).toBe(
      `loaded fx_echo, fx_shout into default/main from client "fx". ${say.whoCanCall('default', 'main')}\n`,
    )
    const system = 'You are terse.'
    const turns: object[] = [{ role: 'user', content: 'Shout hello.' }]
    const first = await step({ system, messages: turns })
    expect(sentTools(0).map((t) => t.name)).toEqual(['Read', 'fx_echo', 'fx_shout'])

    // The model called fx_shout; the harness routed it through the proxy.
    const routed = await fetch(`${p.url}/_holdfast/tools/call`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        workspace: 'default',
        agent: 'main',
        name: 'fx_shout',
        input: { text: 'hello' },
      }),
    })
    const result = (await routed.json()) as { content: { text: string }[]; is_error: boolean }
    expect(result).toEqual({ content: [{ type: 'text', text: 'HELLO' }], is_error: false })
    turns.push(
      {
        role: 'assistant',
        content: [
          ...first.content,
          { type: 'tool_use', id: 'tu1', name: 'fx_shout', input: { text: 'hello' } },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'tu1', content: result.content }] },
    )

    expect(ok(await run('clients', 'unload', 'default', 'main', 'fx', 'shout'))).toMatch(
      /^unloaded fx_shout from default\/main/,
    )
    await step({ system, messages: turns })
    expect(toolsBytes(p.fake.received[1]!.body).equals(toolsBytes(p.fake.received[0]!.body))).toBe(true)

    await p.settled()
    const why2 = await run('why', 'default', 'main', '002')
    // Through the running server, in this process: the same program, without a spawn.
    const list = await cliInProcess(['clients', 'list', '--ws', 'default', '--home', p.home])
    const loaded = await cliInProcess(['clients', 'loaded', 'default', 'main', '--home', p.home])
    expect(ok(list)).toMatch(/^fx: stdio, connected, 11 tools, observed at \S+, workspaces: default\n$/)
    expect(ok(loaded)).toBe('1 loaded for default/main:\n  fx_echo (client fx, tool echo)\n')
    expect(ok(why2)).toContain("the client dropped fx_shout; the hold re-sent step 001's array")
    expect((await why(p.home, 'default', 'main', '002')).hold).toEqual({
      applied: true,
      reason: 'applied',
      held: ['fx_shout'],
    })

    // A new system prompt breaks the prefix: the hold ends, and the closure declares the gone tool.
    turns.push({ role: 'assistant', content: 'Done.' }, { role: 'user', content: 'Again, differently.' })
    await step({ system: 'You are verbose.', messages: turns })
    expect(sentTools(2)).toEqual([
      READ,
      expect.objectContaining({ name: 'fx_echo' }),
      { name: 'fx_shout', description: say.notLoaded('fx_shout'), input_schema: { type: 'object' } },
    ])
    await p.settled()
    const third = await why(p.home, 'default', 'main', '003')
    expect(third.summary).toContain(
      'hold not applied (system-changed): the prefix moved anyway, so the tools went out with that miss',
    )
    expect(third.changes.map((c) => c.why)).toContainEqual(
      expect.stringMatching(/^history closure: declared fx_shout /),
    )

    const call = await fetch(`${p.url}/_holdfast/tools/call`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ workspace: 'default', agent: 'main', name: 'fx_shout', input: { text: 'x' } }),
    })
    expect(await call.json()).toEqual({
      content: [{ type: 'text', text: say.notLoaded('fx_shout') }],
      is_error: true,
    })
  })
})
