/**
 * proxy/live/plugin-records: what plugins read of the records — an agent's latest step (pending or
 * committed), with the request headers meta.json recorded; nothing for an agent or workspace
 * without steps, or a name that is not usable; it never creates a workspace.
 */
import fs from 'node:fs'
import path from 'node:path'
import { recordsView } from '../../../proxy/live/plugin-records'
import { Workspace } from '../../../proxy/store/workspace'
import { startProxy, type Proxy } from '../../support/harness'

let p: Proxy
beforeAll(async () => {
  p = await startProxy({ config: { plugins: [] } })
  for (const session of ['s-one', 's-two']) {
    const res = await fetch(`${p.url}/w/recs/a/main/v1/messages`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'anthropic-version': '2023-06-01',
        'x-claude-code-session-id': session,
        'x-api-key': 'sk-secret-never-shown',
      },
      body: JSON.stringify({
        model: 'claude-sonnet-4-5',
        max_tokens: 8,
        messages: [{ role: 'user', content: 'hi' }],
      }),
    })
    await res.arrayBuffer()
  }
  await p.settled()
})
afterAll(() => p.close())

const view = () => recordsView((name) => new Workspace(p.home, name))

describe('recordsView', () => {
  it("reads an agent's latest step with its recorded (sanitized) headers", async () => {
    const last = await view().latestStep('recs', 'main')
    expect(last?.step).toBe('002')
    expect(last?.headers['x-claude-code-session-id']).toBe('s-two')
    expect(last?.headers['x-api-key']).toBeUndefined()
  })

  it('reads nothing for an agent without steps, a workspace that does not exist (and leaves it so), or a bad name', async () => {
    expect(await view().latestStep('recs', 'nobody')).toBeUndefined()
    expect(await view().latestStep('nowhere', 'main')).toBeUndefined()
    expect(fs.existsSync(path.join(p.home, 'workspaces', 'nowhere'))).toBe(false)
    expect(await view().latestStep('../etc', 'main')).toBeUndefined()
  })
})
