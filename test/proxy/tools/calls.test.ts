/**
 * proxy/tools/calls: `routeCall`, against the stdio fixture host and real loaded-set and
 * registration files. Rules: `clients` always runs the clients tool; any other name must be loaded
 * in this conversation, its input a JSON object, its client still declared and registered in the
 * workspace — each refused in band, in that order, without calling the host; a loaded name reaches
 * its client as the advertised name (a client name with "_" included) with the input unchanged.
 */
import fs from 'node:fs'
import path from 'node:path'
import * as say from '../../../proxy/core/tool-sentences'
import type { LoadedEntry } from '../../../proxy/core/loaded-set'
import { writeLoadedSet } from '../../../proxy/store/loaded-sets'
import { routeCall } from '../../../proxy/tools/calls'
import { syncRegistrations } from '../../../proxy/tools/registration'
import type { ToolHosts } from '../../../proxy/tools/hosts'
import { closeAll, configWith, hostsFor, stdioClient, tempDir, textOf } from './support'

const entry = (client: string, tool: string): LoadedEntry => ({
  client,
  tool: { name: tool, description: '', input_schema: { type: 'object' } },
})

let hosts: ToolHosts
let callLog: string
const dir = tempDir()
const calls = (): { name: string; arguments: unknown }[] =>
  fs.existsSync(callLog)
    ? fs
        .readFileSync(callLog, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { name: string; arguments: unknown })
    : []

beforeAll(async () => {
  callLog = path.join(dir, 'calls.log')
  const clients = {
    my_fx: { ...stdioClient({ FIXTURE_CALL_LOG: callLog }), workspaces: ['default'] },
    idle: { ...stdioClient(), workspaces: ['elsewhere'] },
  }
  hosts = hostsFor(clients)
  await syncRegistrations(hosts.home, configWith(clients))
  await writeLoadedSet(hosts.home, 'default', 'main', [
    entry('my_fx', 'echo'),
    entry('idle', 'echo'),
    entry('retired', 'echo'),
  ])
})
afterAll(async () => {
  await closeAll()
  fs.rmSync(dir, { recursive: true, force: true })
})

describe('routeCall', () => {
  it('sends a loaded name to its client as the advertised name, with the input unchanged', async () => {
    const input = { text: 'hi', extra: { nested: [1, 2] } }
    expect(await routeCall(hosts, 'default', 'main', 'my_fx_echo', input)).toEqual({
      content: [{ type: 'text', text: 'hi' }],
      is_error: false,
    })
    expect(calls()).toEqual([{ name: 'echo', arguments: input }])
  })

  it('runs the clients tool for "clients", with nothing of that name loaded', async () => {
    const r = await routeCall(hosts, 'default', 'main', 'clients', { op: 'get', client: 'nobody' })
    expect(r).toEqual({ content: [{ type: 'text', text: say.unknownClient('nobody') }], is_error: true })
    const bad = await routeCall(hosts, 'default', 'main', 'clients', { op: 'fly' })
    expect(textOf(bad)).toBe('the clients tool needs "op": one of "list", "get", "load", "unload"')
  })

  it('refuses in band a name not loaded for this agent, even one its client advertises', async () => {
    const before = calls().length
    const results = await Promise.all([
      routeCall(hosts, 'default', 'main', 'my_fx_shout', { text: 'x' }),
      routeCall(hosts, 'default', 'other', 'my_fx_echo', { text: 'x' }),
      routeCall(hosts, 'default', 'main', 'echo', { text: 'x' }),
    ])
    expect(results).toEqual(
      ['my_fx_shout', 'my_fx_echo', 'echo'].map((n) => ({
        content: [{ type: 'text', text: say.notLoaded(n) }],
        is_error: true,
      })),
    )
    expect(calls()).toHaveLength(before)
  })

  it('refuses in band an input that is not a JSON object, without calling the host', async () => {
    const before = calls().length
    for (const input of [null, [1], 'text', 3]) {
      expect(await routeCall(hosts, 'default', 'main', 'my_fx_echo', input)).toEqual({
        content: [{ type: 'text', text: say.notAnObject('my_fx_echo') }],
        is_error: true,
      })
    }
    // a name not loaded is refused first, whatever the input
    expect(textOf(await routeCall(hosts, 'default', 'main', 'my_fx_nope', null))).toBe(
      say.notLoaded('my_fx_nope'),
    )
    expect(calls()).toHaveLength(before)
  })

  it('refuses in band a loaded tool whose client is no longer declared or not registered here', async () => {
    expect(await routeCall(hosts, 'default', 'main', 'retired_echo', {})).toEqual({
      content: [{ type: 'text', text: say.unknownClient('retired') }],
      is_error: true,
    })
    expect(await routeCall(hosts, 'default', 'main', 'idle_echo', { text: 'x' })).toEqual({
      content: [{ type: 'text', text: say.notRegistered('idle', 'default') }],
      is_error: true,
    })
  })
})
