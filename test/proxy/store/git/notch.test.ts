/**
 * store/git/notch: what `--from` names. Covers: a step commit's message gives its step (and nothing
 * else does), stepCommit walks first parents and stops once past the step, and resolveNotch takes
 * `config/<name>` (a clean start, kept by name), `<agent>@<NNN>` (that step's commit), and any
 * revision git would take (a fork carried as its commit id), refusing each unknown one by name.
 */
import fs from 'node:fs'
import { commitFiles } from '../../../../proxy/store/git'
import type { Repo } from '../../../../proxy/store/git/repo'
import { casRef } from '../../../../proxy/store/git/refs'
import { resolveNotch, stepCommit } from '../../../../proxy/store/git/notch'
import { commitSteps } from '../../../../proxy/record/commit/step-commits'
import { git, configRepo } from '../git.support'

let dir: string
let gitdir: string
let repo: Repo
let root: string
/** Commit ids of agent a's steps 1..3 and agent b's step 1. */
let a: string[]
let b1: string

const step = (agent: string, n: number) => ({
  agent,
  n,
  model: 'm',
  files: { 'request.json': Buffer.from(`{"n":${n}}`) },
})

beforeEach(async () => {
  ;({ dir, gitdir, repo, root } = await configRepo('holdfast-notch-'))
  const { oids } = await commitSteps(repo, [step('a', 1), step('a', 2), step('a', 3), step('b', 1)])
  a = [1, 2, 3].map((n) => oids.get(`a/${n}`) as string)
  b1 = oids.get('b/1') as string
})
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }))

describe('stepCommit', () => {
  it("finds each step's commit on the agent's branch, and nothing for a step it does not have", async () => {
    for (const [i, oid] of a.entries()) expect(await stepCommit(repo, 'a', i + 1)).toBe(oid)
    expect(await stepCommit(repo, 'a', 4)).toBeUndefined()
    expect(await stepCommit(repo, 'b', 1)).toBe(b1)
    expect(await stepCommit(repo, 'nobody', 1)).toBeUndefined()
  })

  it("skips other agents' steps and plain commits on the branch, and stops once past the step", async () => {
    // On top of a's tip: a plain commit, then a step that claims to be b's: both are walked past.
    const plain = await commitFiles(repo, { parent: a[2], files: { note: 'x' }, message: 'a note' })
    const foreign = await commitFiles(repo, { parent: plain, files: {}, message: 'step 009: m [b]' })
    await casRef(repo, 'refs/heads/agents/a', foreign, a[2] as string)
    expect(await stepCommit(repo, 'a', 2)).toBe(a[1])
    // Branch c: root ← "step 002" ← "step 001" ← "step 003". Looking for 2, the walk stops at 1
    // (below it nothing can be step 2) and never reaches the odd commit underneath.
    const odd = await commitFiles(repo, { parent: root, files: {}, message: 'step 002: m [c]' })
    const one = await commitFiles(repo, { parent: odd, files: {}, message: 'step 001: m [c]' })
    const three = await commitFiles(repo, { parent: one, files: {}, message: 'step 003: m [c]' })
    await casRef(repo, 'refs/heads/agents/c', three, null)
    expect(await stepCommit(repo, 'c', 3)).toBe(three)
    expect(await stepCommit(repo, 'c', 1)).toBe(one)
    expect(await stepCommit(repo, 'c', 2)).toBeUndefined()
  })
})

describe('resolveNotch', () => {
  it('takes config/<name> and refs/heads/config/<name> as a clean start kept by name', async () => {
    const clean = { kind: 'clean', ref: 'config/default', lineage: 'default', commit: root }
    expect(await resolveNotch(repo, 'config/default')).toEqual(clean)
    expect(await resolveNotch(repo, 'refs/heads/config/default')).toEqual(clean)
    await expect(resolveNotch(repo, 'config/other')).rejects.toThrow(
      '--from config/other: no config lineage "other"',
    )
  })

  it('takes <agent>@<NNN> as that step, and refuses a step the agent has not committed', async () => {
    expect(await resolveNotch(repo, 'a@2')).toEqual({
      kind: 'fork',
      ref: 'a@2',
      commit: a[1],
      step: { agent: 'a', n: 2 },
    })
    expect(await resolveNotch(repo, 'a@002')).toMatchObject({ commit: a[1] })
    await expect(resolveNotch(repo, 'a@7')).rejects.toThrow('--from a@7: agent "a" has no committed step 007')
  })

  it('takes a branch, a commit or a prefix as a fork carried by commit id, with its step if it is one', async () => {
    expect(await resolveNotch(repo, 'agents/a')).toEqual({
      kind: 'fork',
      ref: 'agents/a',
      commit: a[2],
      step: { agent: 'a', n: 3 },
    })
    expect(await resolveNotch(repo, (b1 as string).slice(0, 10))).toMatchObject({
      commit: b1,
      step: { agent: 'b', n: 1 },
    })
    const plain = await resolveNotch(repo, root)
    expect(plain).toEqual({ kind: 'fork', ref: root, commit: root })
    expect(git(gitdir, 'rev-parse', 'agents/a').trim()).toBe(a[2])
  })

  it('refuses an empty value, an unknown ref and a malformed one, naming what was given', async () => {
    await expect(resolveNotch(repo, '')).rejects.toThrow('--from is empty')
    await expect(resolveNotch(repo, 'agents/nobody')).rejects.toThrow(
      '--from agents/nobody: no such commit or ref',
    )
    await expect(resolveNotch(repo, 'no such')).rejects.toThrow(
      /^--from no such: revision "no such" is not a ref name or object id$/,
    )
  })
})
