/**
 * cli/config: `config set-role`, `remove-role` and `show` on a workspace's config lineage, in process
 * against a real home and repository. An edit that does not validate (a provider row holdfast.yaml
 * does not declare, a role that is not declared, a lineage that does not exist, a max-output-tokens
 * that is not a positive integer) commits nothing; what is printed names the new tip; `show` prints
 * the lineage's providers.yaml as text or JSON.
 */
import fs from 'node:fs'
import path from 'node:path'
import { openRepo } from '../../proxy/store/git'
import { casRef } from '../../proxy/store/git/refs'
import { git } from '../support/harness'
import { cleanup, homeWithWorkspace } from '../hooks/helpers'
import { runCli } from './inprocess.support'

let home: string
let repo: string

beforeAll(async () => {
  ;({ home, repo } = await homeWithWorkspace('proj'))
})
afterAll(() => cleanup())

const tip = (lineage = 'default'): string => git(repo, 'rev-parse', `config/${lineage}`).trim()
const cfg = (...args: string[]) => runCli(['config', ...args, '--home', home])

describe('holdfast config', () => {
  it('declares a role, prints the new tip, and show reads it back as text and JSON', async () => {
    const before = tip()
    const set = await cfg(
      'set-role',
      'proj',
      'reviewer',
      '--provider',
      'anthropic',
      '--model',
      'claude-haiku-4-5',
    )
    expect(set.code).toBe(0)
    const now = tip()
    expect(now).not.toBe(before)
    expect(set.stdout).toBe(
      `config/default at ${now.slice(0, 8)}: role reviewer → anthropic/claude-haiku-4-5\n`,
    )
    expect(git(repo, 'rev-parse', `${now}^`).trim()).toBe(before)

    const text = await cfg('show', 'proj')
    expect(text.code).toBe(0)
    expect(text.stdout.split('\n')[0]).toBe(`# config/default at ${now.slice(0, 8)}`)
    expect(text.stdout).toMatch(/reviewer/)
    expect(text.stdout).toMatch(/claude-haiku-4-5/)
    const json = JSON.parse((await cfg('show', 'proj', '--json')).stdout) as Record<string, unknown>
    expect(json).toEqual({
      lineage: 'default',
      commit: now,
      roles: { reviewer: { provider: 'anthropic', model: 'claude-haiku-4-5' } },
    })
  })

  it('refuses a provider row holdfast.yaml does not declare, and the lineage does not move', async () => {
    const before = tip()
    const r = await cfg('set-role', 'proj', 'writer', '--provider', 'nowhere', '--model', 'm')
    expect(r.code).toBe(1)
    expect(r.stdout).toBe('')
    expect(r.stderr).toMatch(/^holdfast: .*nowhere/)
    expect(tip()).toBe(before)
  })

  it('takes --max-output-tokens only as a positive integer, and records it on the role', async () => {
    const before = tip()
    for (const bad of ['0', '-3', '1.5', 'many']) {
      const r = await cfg(
        'set-role',
        'proj',
        'critic',
        '--provider',
        'anthropic',
        '--model',
        'm',
        '--max-output-tokens',
        bad,
      )
      expect(r.code).toBe(1)
      expect(r.stderr).toBe(`holdfast: --max-output-tokens ${bad} is not a positive integer\n`)
    }
    expect(tip()).toBe(before)
    const ok = await cfg(
      'set-role',
      'proj',
      'critic',
      '--provider',
      'openai',
      '--model',
      'gpt-5',
      '--max-output-tokens',
      '321',
    )
    expect(ok.code).toBe(0)
    const json = JSON.parse((await cfg('show', 'proj', '--json')).stdout) as {
      roles: Record<string, unknown>
    }
    expect(json.roles.critic).toEqual({ provider: 'openai', model: 'gpt-5', max_output_tokens: 321 })
  })

  it('removes a declared role, and refuses one that is not declared naming those that are', async () => {
    await cfg('set-role', 'proj', 'gone', '--provider', 'anthropic', '--model', 'm')
    const removed = await cfg('remove-role', 'proj', 'gone')
    expect(removed.code).toBe(0)
    expect(removed.stdout).toBe(`config/default at ${tip().slice(0, 8)}: role gone removed\n`)
    const before = tip()
    const again = await cfg('remove-role', 'proj', 'gone')
    expect(again.code).toBe(1)
    expect(again.stderr).toMatch(
      /^holdfast: config\/default declares no role "gone"; declared roles: .*reviewer/,
    )
    expect(tip()).toBe(before)
  })

  it('edits only the lineage named by --lineage, and refuses one that does not exist', async () => {
    const missing = await cfg(
      'set-role',
      'proj',
      'r',
      '--provider',
      'anthropic',
      '--model',
      'm',
      '--lineage',
      'exp',
    )
    expect(missing.code).toBe(1)
    expect(missing.stderr).toMatch(/no config lineage "exp"/)
    const root = git(repo, 'rev-list', '--max-parents=0', 'config/default').trim()
    await casRef(openRepo(repo), 'refs/heads/config/exp', root, null) // no hook run: plumbing
    const main = tip()
    const set = await cfg(
      'set-role',
      'proj',
      'only',
      '--provider',
      'anthropic',
      '--model',
      'm',
      '--lineage',
      'exp',
    )
    expect(set.code).toBe(0)
    expect(set.stdout).toMatch(/^config\/exp at [0-9a-f]{8}: role only → anthropic\/m\n$/)
    expect(tip()).toBe(main)
    const exp = JSON.parse((await cfg('show', 'proj', '--lineage', 'exp', '--json')).stdout) as {
      roles: object
    }
    expect(Object.keys(exp.roles)).toEqual(['only'])
  })

  it('refuses remove-role on a workspace that does not exist, creating nothing', async () => {
    const r = await cfg('remove-role', 'nowhere', 'x')
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(/^holdfast: no workspace "nowhere" in .*--create makes it/)
    expect(fs.existsSync(path.join(home, 'workspaces', 'nowhere'))).toBe(false)
  })
})
