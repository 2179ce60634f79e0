/**
 * store/config/edit: editing a config lineage without a worktree. Covers: a role added or set is
 * committed on the lineage's tip (message says which) and the ref moves by compare-and-swap; an edit
 * that would not validate (an undeclared provider row, a bad role name, an unknown role to remove,
 * a missing or malformed lineage) writes no object and moves no ref; a stale tip is refused and the
 * ref never moves backwards; a tip without providers.yaml reads as no roles.
 */
import fs from 'node:fs'
import path from 'node:path'
import type { ProviderRow } from '../../../../proxy/store/config'
import {
  ConfigEditError,
  readLineage,
  removeRole,
  setRole,
  writeLineage,
} from '../../../../proxy/store/config/edit'
import { commitFiles } from '../../../../proxy/store/git'
import type { Repo } from '../../../../proxy/store/git/repo'
import { casRef, readRef, RefConflict } from '../../../../proxy/store/git/refs'
import { git, packFiles, configRepo } from '../git.support'

const REF = 'refs/heads/config/default'
const rows: Record<string, ProviderRow> = {
  anthropic: { dialect: 'anthropic', base_url: 'https://api.anthropic.com' },
  openai: { dialect: 'openai', base_url: 'https://api.openai.com/v1' },
}

let dir: string
let gitdir: string
let repo: Repo
let root: string
beforeEach(async () => {
  ;({ dir, gitdir, repo, root } = await configRepo('holdfast-config-edit-'))
})
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }))

/** What the repository holds: every ref and every object (a refused edit must change neither). */
const snapshot = (): string =>
  git(gitdir, 'for-each-ref') +
  git(gitdir, 'cat-file', '--batch-all-objects', '--batch-check') +
  packFiles(gitdir).join()

/** The error `p` rejects with (fails when it resolves). */
async function refusal(p: Promise<unknown>): Promise<Error> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e as Error,
  )
  if (!err) throw new Error('the edit was accepted')
  return err
}

describe('setRole and removeRole', () => {
  it('adds then sets a role, each a commit on the tip that git reads back and fsck accepts', async () => {
    const added = await setRole(
      repo,
      'default',
      'reviewer',
      { provider: 'anthropic', model: 'claude-haiku-4-5' },
      rows,
    )
    expect(git(gitdir, 'rev-parse', REF).trim()).toBe(added)
    expect(git(gitdir, 'log', '-1', '--format=%P %s', added).trim()).toBe(
      `${root} config: add role reviewer → anthropic/claude-haiku-4-5`,
    )
    const set = await setRole(
      repo,
      'default',
      'reviewer',
      { provider: 'openai', model: 'gpt-5', max_output_tokens: 100 },
      rows,
    )
    expect(git(gitdir, 'log', '-1', '--format=%P %s', set).trim()).toBe(
      `${added} config: set role reviewer → openai/gpt-5`,
    )
    expect(git(gitdir, 'show', `${REF}:providers.yaml`)).toContain('reviewer:')
    const { tip, config } = await readLineage(repo, 'default', rows)
    expect(tip).toBe(set)
    expect(config).toEqual({
      roles: { reviewer: { provider: 'openai', model: 'gpt-5', max_output_tokens: 100 } },
    })
    expect(git(gitdir, 'fsck', '--strict', '--no-dangling')).toBe('')
  })

  it('removes a declared role, and refuses an undeclared one naming the roles that are declared', async () => {
    await setRole(repo, 'default', 'b', { provider: 'anthropic', model: 'm' }, rows)
    await setRole(repo, 'default', 'a', { provider: 'anthropic', model: 'm' }, rows)
    const before = snapshot()
    const err = await refusal(removeRole(repo, 'default', 'zz', rows))
    expect(err).toBeInstanceOf(ConfigEditError)
    expect(err.message).toBe('config/default declares no role "zz"; declared roles: a, b')
    expect(snapshot()).toBe(before)
    const oid = await removeRole(repo, 'default', 'a', rows)
    expect(git(gitdir, 'log', '-1', '--format=%s', oid).trim()).toBe('config: remove role a')
    expect((await readLineage(repo, 'default')).config).toEqual({
      roles: { b: { provider: 'anthropic', model: 'm' } },
    })
    await removeRole(repo, 'default', 'b', rows)
    expect((await refusal(removeRole(repo, 'default', 'b', rows))).message).toMatch(/declared roles: none$/)
  })

  it('refuses a role on an undeclared provider row or with an unusable name, writing nothing', async () => {
    const before = snapshot()
    const err = await refusal(setRole(repo, 'default', 'r', { provider: 'nowhere', model: 'm' }, rows))
    expect(err).toBeInstanceOf(ConfigEditError)
    expect(err.message).toBe(
      'providers.yaml: roles.r.provider: "nowhere" is not a provider row in holdfast.yaml (declared: anthropic, openai)',
    )
    for (const name of ['a b', '..', 'x.lock', '']) {
      expect(
        await refusal(setRole(repo, 'default', name, { provider: 'anthropic', model: 'm' }, rows)),
      ).toBeInstanceOf(ConfigEditError)
    }
    expect(snapshot()).toBe(before)
  })
})

describe('readLineage', () => {
  it('refuses a missing lineage and a malformed lineage name, naming them', async () => {
    expect((await refusal(readLineage(repo, 'nope'))).message).toBe(
      'no config lineage "nope" (refs/heads/config/nope does not exist)',
    )
    expect(await refusal(readLineage(repo, '../default'))).toBeInstanceOf(ConfigEditError)
    const before = snapshot()
    await refusal(setRole(repo, 'nope', 'r', { provider: 'anthropic', model: 'm' }, rows))
    expect(snapshot()).toBe(before)
  })

  it('reads a tip without providers.yaml as no roles, and refuses one whose providers.yaml is invalid', async () => {
    const bare = await commitFiles(repo, { parent: undefined, files: { 'README.md': 'x' }, message: 'bare' })
    await casRef(repo, 'refs/heads/config/bare', bare, null)
    expect(await readLineage(repo, 'bare')).toEqual({ tip: bare, config: { roles: {} } })
    const bad = await commitFiles(repo, {
      parent: root,
      files: { 'providers.yaml': 'roles: {r: {provider: x}}\n' },
      message: 'bad',
    })
    await casRef(repo, 'refs/heads/config/bad', bad, null)
    const err = await refusal(readLineage(repo, 'bad'))
    expect(err).toBeInstanceOf(ConfigEditError)
    expect(err.message).toBe('providers.yaml at config/bad: roles.r: missing key "model"')
    // A tip with a role on a row holdfast.yaml no longer declares: readable, but no edit validates.
    const stale = await commitFiles(repo, {
      parent: root,
      files: { 'providers.yaml': 'roles: {old: {provider: gone, model: m}}\n' },
      message: 'stale',
    })
    await casRef(repo, 'refs/heads/config/stale', stale, null)
    expect((await readLineage(repo, 'stale')).config.roles.old?.provider).toBe('gone')
    await expect(readLineage(repo, 'stale', rows)).rejects.toThrow(/"gone" is not a provider row/)
    await expect(setRole(repo, 'stale', 'new', { provider: 'anthropic', model: 'm' }, rows)).rejects.toThrow(
      /"gone"/,
    )
    expect(await readRef(repo, 'refs/heads/config/stale')).toBe(stale)
  })
})

describe('writeLineage', () => {
  it('refuses a tip that is no longer the lineage tip, leaving the ref where it is', async () => {
    const { tip, config } = await readLineage(repo, 'default')
    const moved = await setRole(repo, 'default', 'first', { provider: 'anthropic', model: 'm' }, rows)
    const err = await refusal(
      writeLineage(repo, 'default', tip, { roles: { ...config.roles } }, rows, 'late'),
    )
    expect(err).toBeInstanceOf(RefConflict)
    expect(err).toMatchObject({ expected: tip, actual: moved })
    expect(git(gitdir, 'rev-parse', REF).trim()).toBe(moved)
    expect(fs.existsSync(path.join(gitdir, `${REF}.lock`))).toBe(false)
  })
})
