/** report/roles: the roles at a ref's followed config with the model that will run, a row's absence said; a ref that names nothing is a NotFound. */
import fs from 'node:fs'
import { NotFound } from '../../../proxy/report/lookup'
import { rolesAt } from '../../../proxy/report/roles'
import { setRole } from '../../../proxy/store/config/edit'
import { Workspace } from '../../../proxy/store/workspace'
import { tempHome } from '../../support/harness'

let home: string
let ws: Workspace
const rows = { anthropic: { dialect: 'anthropic' as const, base_url: 'http://127.0.0.1:9' } }
beforeAll(async () => {
  home = tempHome()
  ws = new Workspace(home, 'w')
  await ws.ensure()
  await setRole(ws.repo, 'default', 'reviewer', { provider: 'anthropic', model: 'claude-haiku-4-5' }, rows)
})
afterAll(() => fs.rmSync(home, { recursive: true, force: true }))

describe('rolesAt', () => {
  it('lists the roles at the followed config, headed with what is followed', async () => {
    const r = await rolesAt(ws, rows, 'config/default')
    expect(r.heading).toMatch(/^follows config\/default at [0-9a-f]{8}$/)
    expect(r.roles).toEqual([
      {
        role: 'reviewer',
        provider: 'anthropic',
        model: 'claude-haiku-4-5',
        max_output_tokens: null,
        row_declared: true,
      },
    ])
    expect((await rolesAt(ws, {}, 'config/default')).roles[0]?.row_declared).toBe(false)
  })

  it('refuses a ref that names nothing', async () => {
    await expect(rolesAt(ws, rows, 'agents/ghost')).rejects.toBeInstanceOf(NotFound)
  })
})
