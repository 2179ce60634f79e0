/**
 * cli/lookup: finding what a command names. An unknown workspace or agent is refused with one
 * sentence naming what exists (or saying nothing exists yet); an agent exists when it has a branch
 * or a journaled step (an empty journal directory is not an agent); names are checked before any
 * lookup; looking never creates anything.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { agentsOf, existingAgent, existingWorkspace, workspacesSentence } from '../../cli/lookup'
import { CliError } from '../../cli/output'
import type { StepMeta } from '../../generated/meta'
import { Journal } from '../../proxy/record/journal/writer'
import { casRef, readRef } from '../../proxy/store/git/refs'
import { Workspace } from '../../proxy/store/workspace'

let home: string
let ws: Workspace

beforeAll(async () => {
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'holdfast-lookup-'))
  ws = new Workspace(home, 'proj')
  await ws.ensure()
  await new Workspace(home, 'other').ensure()
  const tip = (await readRef(ws.repo, 'refs/heads/config/default')) as string
  // Two agents with branches (created out of order), one with only a journaled step, one with an
  // empty journal directory (a step that never got its send half written).
  await casRef(ws.repo, 'refs/heads/agents/zed', tip, null)
  await casRef(ws.repo, 'refs/heads/agents/alpha', tip, null)
  const journal = new Journal(false)
  journal.agent(ws.agentJournal('pending')).send(1, {} as StepMeta, Buffer.from('{}'))
  journal.agent(ws.agentJournal('alpha')).send(2, {} as StepMeta, Buffer.from('{}'))
  journal.close()
  fs.mkdirSync(ws.agentJournal('ghost'), { recursive: true })
})
afterAll(() => fs.rmSync(home, { recursive: true, force: true }))

async function refusal(p: Promise<unknown>): Promise<CliError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(err).toBeInstanceOf(CliError)
  expect((err as CliError).exitCode).toBe(1)
  return err as CliError
}

describe('workspaces', () => {
  it('says how a workspace is created when the home has none, and names them when it has some', async () => {
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'holdfast-lookup-empty-'))
    try {
      const none = await workspacesSentence(empty)
      expect(none).toBe(
        `${empty} has no workspace yet (a workspace is created by its first request, or by \`holdfast config set-role <ws> … --create\`)`,
      )
      // Looking did not create the workspaces directory.
      expect(fs.readdirSync(empty)).toEqual([])
    } finally {
      fs.rmSync(empty, { recursive: true, force: true })
    }
    const some = await workspacesSentence(home)
    expect(some).toMatch(new RegExp(`^workspaces in ${home}: `))
    expect(some.split(': ')[1]!.split(', ').sort()).toEqual(['other', 'proj'])
  })

  it('finds an existing workspace and refuses an unknown one naming the others, creating nothing', async () => {
    expect((await existingWorkspace(home, 'proj')).name).toBe('proj')
    const err = await refusal(existingWorkspace(home, 'nowhere'))
    expect(err.message).toMatch(new RegExp(`^no workspace "nowhere" in ${home}; workspaces in ${home}: `))
    expect(err.message).toContain('proj')
    expect(fs.existsSync(path.join(home, 'workspaces', 'nowhere'))).toBe(false)
  })

  it('refuses a name that is not a workspace name before looking', async () => {
    await expect(existingWorkspace(home, '../proj')).rejects.toMatchObject({ name: 'HoldfastError' })
    await expect(existingWorkspace(home, '../proj')).rejects.not.toBeInstanceOf(CliError)
  })
})

describe('agents', () => {
  it('lists agents with a branch or a journaled step, sorted and once each, but not an empty journal directory', async () => {
    expect(await agentsOf(ws)).toEqual(['alpha', 'pending', 'zed'])
  })

  it('answers a known agent, and refuses an unknown one naming the workspace and its agents', async () => {
    expect(await existingAgent(ws, 'pending')).toBe('pending')
    expect(await existingAgent(ws, 'zed')).toBe('zed')
    const err = await refusal(existingAgent(ws, 'ghost'))
    expect(err.message).toBe('no agent "ghost" in workspace "proj"; its agents: alpha, pending, zed')
  })

  it('says "none yet" for a workspace without agents, and creates no journal while looking', async () => {
    const other = new Workspace(home, 'other')
    const before = fs.readdirSync(other.journalDir)
    const err = await refusal(existingAgent(other, 'main'))
    expect(err.message).toBe('no agent "main" in workspace "other"; its agents: none yet')
    expect(fs.readdirSync(other.journalDir)).toEqual(before)
  })

  it('refuses an agent name that is not a name before listing', async () => {
    await expect(existingAgent(ws, 'a/b')).rejects.toMatchObject({ name: 'HoldfastError' })
  })
})
