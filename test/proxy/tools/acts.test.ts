/**
 * proxy/tools/acts: list, get, loaded, load and unload as Acts, against the stdio fixture host and
 * real loaded-set files. Rules: an unusable name is refused BAD_NAME before anything else; an
 * empty answer says why it is empty; `get` names each tool's loaded name and each element that
 * cannot be loaded; a load adds to the set (union, sorted) and, from a host that cannot be listed
 * now, uses its stored advertisement and says so; an unload counts a repeated name once and keeps
 * the other clients' tools; a refusal writes nothing.
 */
import fs from 'node:fs'
import path from 'node:path'
import * as say from '../../../proxy/core/tool-sentences'
import type { LoadedEntry } from '../../../proxy/core/loaded-set'
import { readLoadedSet, writeLoadedSet } from '../../../proxy/store/loaded-sets'
import { getClient, listClients, loadedTools, loadTools, unloadTools } from '../../../proxy/tools/acts'
import type { ToolHosts } from '../../../proxy/tools/hosts'
import { syncRegistrations } from '../../../proxy/tools/registration'
import { CATALOGUE } from '../../fixtures/mcp/host'
import { closeAll, configWith, hostsFor, stdioClient } from './support'

const FX = {
  ...stdioClient({
    FIXTURE_EXTRA: JSON.stringify([{ name: 'a/b', inputSchema: { type: 'object' } }]),
  }),
  workspaces: ['default', 'proj'],
}
let up: ToolHosts

beforeAll(async () => {
  up = hostsFor({ fx: FX })
  await syncRegistrations(up.home, configWith({ fx: FX }))
})
afterAll(closeAll)

const entry = (client: string, tool: string): LoadedEntry => ({
  client,
  tool: { name: tool, description: 'd', input_schema: { type: 'object' } },
})
const names = (home: string, agent: string, ws = 'default'): string[] =>
  readLoadedSet(home, ws, agent).map((e) => `${e.client}_${e.tool.name}`)

describe('list, get and loaded', () => {
  it('says why a list is empty: no clients declared, or none registered in the workspace', async () => {
    const none = hostsFor({})
    expect(await listClients(none)).toEqual({
      ok: true,
      message: 'holdfast.yaml declares no clients',
      body: { clients: [] },
    })
    expect(await listClients(up, 'nowhere')).toEqual({
      ok: true,
      message: 'no client is registered in workspace "nowhere"',
      body: { clients: [] },
    })
  })

  it('lists a registered client as one line: transport, state, tool count, observation, workspaces', async () => {
    const r = await listClients(up, 'proj')
    expect(r.ok).toBe(true)
    if (!r.ok) return
    expect(r.body.clients.map((c) => c.client)).toEqual(['fx'])
    expect(r.message).toMatch(
      new RegExp(
        `^fx: stdio, connected, ${CATALOGUE.length} tools, observed at \\d{4}-\\d\\d-\\d\\dT\\S+Z, workspaces: default, proj$`,
      ),
    )
  })

  it("gets a client's tools with the names they load as, and each element that cannot be loaded", async () => {
    const r = await getClient(up, 'fx')
    expect(r.ok).toBe(true)
    const lines = r.message.split('\n')
    expect(lines).toContain('  echo (loads as fx_echo): Echo the text back.')
    expect(lines).toContain('  plain (loads as fx_plain)')
    expect(lines.at(-1)).toMatch(
      /^ {2}not loadable: "a\/b": field "name" is "a\/b", which is not one path component/,
    )
    expect(lines).toHaveLength(1 + CATALOGUE.length + 1)
  })

  it('refuses an unusable workspace, agent or client name as BAD_NAME, and an undeclared client as CLIENT_UNKNOWN', async () => {
    const refusals = [
      await listClients(up, '..'),
      await getClient(up, 'a b'),
      loadedTools(up.home, 'default', '-x'),
      await loadTools(up, 'ws', 'agent', '..', ['echo']),
      await unloadTools(up.home, 'w/s', 'agent', 'fx', []),
    ]
    expect(refusals.map((r) => (r.ok ? 'ok' : r.code))).toEqual(Array(5).fill('BAD_NAME'))
    const unknown = await getClient(up, 'nobody')
    expect(unknown).toEqual({ ok: false, code: 'CLIENT_UNKNOWN', message: say.unknownClient('nobody') })
  })

  it("lists an agent's loaded set in presented-name order, and says when it is empty", async () => {
    expect(loadedTools(up.home, 'default', 'lister')).toEqual({
      ok: true,
      message: 'nothing is loaded for default/lister',
      body: { tools: [] },
    })
    await loadTools(up, 'default', 'lister', 'fx', ['shout', 'echo'])
    const r = loadedTools(up.home, 'default', 'lister')
    expect(r.message).toBe(
      '2 loaded for default/lister:\n  fx_echo (client fx, tool echo)\n  fx_shout (client fx, tool shout)',
    )
    expect(r.ok && r.body.tools[0]).toEqual({
      name: 'fx_echo',
      client: 'fx',
      tool: 'echo',
      description: 'Echo the text back.',
    })
  })
})

describe('load and unload', () => {
  it('adds a load to what is loaded already, counting a repeated name once', async () => {
    const first = await loadTools(up, 'default', 'adder', 'fx', ['shout'])
    const second = await loadTools(up, 'default', 'adder', 'fx', ['echo', 'echo', 'shout'])
    expect(second.ok && second.body.loaded).toEqual(['fx_echo', 'fx_shout'])
    expect(second.ok && second.body.tools.map((t) => t.name)).toEqual(['fx_echo', 'fx_shout'])
    expect(first.ok && first.message).toBe(
      `loaded fx_shout into default/adder from client "fx". ${say.whoCanCall('default', 'adder')}`,
    )
    expect(names(up.home, 'adder')).toEqual(['fx_echo', 'fx_shout'])
  })

  it("unloads a repeated name once, and all of one client's tools without touching another's", async () => {
    const home = up.home
    await writeLoadedSet(home, 'default', 'mixed', [
      entry('fx', 'echo'),
      entry('fx', 'shout'),
      entry('fx', 'pid'),
      entry('fy', 'echo'),
    ])
    const once = await unloadTools(home, 'default', 'mixed', 'fx', ['pid', 'pid'])
    expect(once.ok && once.body.unloaded).toEqual(['fx_pid'])
    const all = await unloadTools(home, 'default', 'mixed', 'fx', [])
    expect(all.ok && all.body).toEqual({
      unloaded: ['fx_echo', 'fx_shout'],
      tools: [{ name: 'fy_echo', client: 'fy', tool: 'echo', description: 'd' }],
    })
    expect(all.message).toMatch(
      /^unloaded fx_echo, fx_shout from default\/mixed; the next step's hold re-sends/,
    )
    expect(names(home, 'mixed')).toEqual(['fy_echo'])
  })

  it('loads from the stored advertisement when the host cannot be listed now, and says so', async () => {
    await getClient(up, 'fx') // stores the advertisement
    const down = hostsFor(
      { fx: { mcp: { command: path.join(up.home, 'no-such-host') }, workspaces: ['default'] } },
      { home: up.home },
    )
    const r = await loadTools(down, 'default', 'stale', 'fx', ['echo'])
    expect(r.ok).toBe(true)
    expect(r.message).toMatch(
      /^loaded fx_echo into default\/stale from client "fx" \(the host cannot be listed now: .*ENOENT.*; its advertisement observed at \S+ was used\)\. /,
    )
    expect(names(up.home, 'stale')).toEqual(['fx_echo'])
  })

  it('refuses a load from a host never listed, saying so, and writes nothing', async () => {
    const down = hostsFor({ gone: { mcp: { command: '/nonexistent/host' }, workspaces: ['default'] } })
    await syncRegistrations(
      down.home,
      configWith({ gone: { mcp: { command: 'x' }, workspaces: ['default'] } }),
    )
    const r = await loadTools(down, 'default', 'never', 'gone', ['echo'])
    expect(r.ok).toBe(false)
    expect(!r.ok && r.code).toBe('LOAD_REFUSED')
    expect(r.message).toMatch(
      /^load into default\/never refused, nothing was written: client "gone" advertises no tool "echo" right now \(the host cannot be listed now: .*ENOENT.*; no advertisement was ever observed\)$/,
    )
    expect(fs.existsSync(path.join(down.home, 'loaded', 'default', 'never.json'))).toBe(false)
  })
})
