/** report/lookup: the shared lookups refuse an unknown workspace or agent with a NotFound naming what exists, and create nothing. */
import fs from 'node:fs'
import path from 'node:path'
import { existingAgent, existingWorkspace, NotFound } from '../../../proxy/report/lookup'
import { Workspace } from '../../../proxy/store/workspace'
import { tempHome } from '../../support/harness'

let home: string
beforeAll(async () => {
  home = tempHome()
  await new Workspace(home, 'proj').ensure()
})
afterAll(() => fs.rmSync(home, { recursive: true, force: true }))

describe('lookups', () => {
  it('refuse an unknown workspace with a NotFound that names the existing ones', async () => {
    const err = await existingWorkspace(home, 'nowhere').catch((e: unknown) => e)
    expect(err).toBeInstanceOf(NotFound)
    expect((err as Error).message).toBe(`no workspace "nowhere" in ${home}; workspaces in ${home}: proj`)
    expect(fs.existsSync(path.join(home, 'workspaces', 'nowhere'))).toBe(false)
  })

  it('refuse an unknown agent naming the workspace’s agents', async () => {
    const ws = await existingWorkspace(home, 'proj')
    await expect(existingAgent(ws, 'main')).rejects.toThrow(
      new NotFound('no agent "main" in workspace "proj"; its agents: none yet'),
    )
  })
})
