/**
 * Recorded steps for the record tests: a real workspace repository, steps committed on an agent's
 * branch as the committer writes them, a step whose file is a directory (made with git's own
 * plumbing, as a hand-edited history could), and send-half metas.
 */
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import type { StepMeta } from '../../../generated/meta'
import { formatStep } from '../../../proxy/core/naming'
import { agentRef, stepTreePath } from '../../../proxy/core/layout'
import { commitStep } from '../../../proxy/record/commit/step-commits'
import { Workspace } from '../../../proxy/store/workspace'

export const MODEL = 'claude-sonnet-4-5'

/** A send half as the record stage writes it (what the schema requires, nothing of the answer). */
export function sentMeta(ws: string, agent: string, n: number, over: Partial<StepMeta> = {}): StepMeta {
  return {
    version: 1,
    workspace: ws,
    agent,
    step: formatStep(n),
    dialect: 'anthropic',
    endpoint: '/v1/messages',
    started_at: '2026-12-02T00:00:00.000Z',
    route: { provider: 'anthropic', url: 'http://127.0.0.1:9/v1/messages', model: MODEL },
    request_headers: {},
    cache_keying_headers: {},
    hold: { applied: false, reason: 'first-step', held: [] },
    injected_tools: [],
    changes: [],
    request_bytes: 0,
    ...over,
  } as StepMeta
}

export const requestBytes = (text: string): Buffer =>
  Buffer.from(JSON.stringify({ model: MODEL, max_tokens: 64, messages: [{ role: 'user', content: text }] }))

/** A workspace whose repository exists (root commit on config/default, no agent branch yet). */
export async function readyWorkspace(home: string, name: string): Promise<Workspace> {
  const ws = new Workspace(home, name)
  await ws.ensure()
  return ws
}

/** Commit step `n` of `agent` with `files` on its branch; answers the commit id. */
export function commitFiles(
  ws: Workspace,
  agent: string,
  n: number,
  files: Record<string, string | Buffer>,
): Promise<string> {
  const bytes = Object.fromEntries(
    Object.entries(files).map(([k, v]) => [k, Buffer.isBuffer(v) ? v : Buffer.from(v)]),
  )
  return commitStep(ws.repo, { agent, n, model: MODEL, files: bytes })
}

function gitIn(gitdir: string, args: string[], input?: string, env: NodeJS.ProcessEnv = {}): string {
  const r = spawnSync('git', ['-c', 'core.hooksPath=/dev/null', '--git-dir', gitdir, ...args], {
    input,
    encoding: 'utf8',
    env: { ...process.env, ...env },
  })
  if (r.status !== 0) throw new Error(`git ${args.join(' ')} failed: ${r.stderr}`)
  return r.stdout.trim()
}

/**
 * Move `agent`'s branch to a commit whose step `n` holds a directory named `file` (with one file
 * inside) where a file should be, on top of the branch as it is.
 */
export function commitDirectoryInPlace(ws: Workspace, agent: string, n: number, file: string): string {
  const gitdir = ws.repo.gitdir
  const index = `${gitdir}/holdfast-test-index`
  const env = { GIT_INDEX_FILE: index }
  const ref = agentRef(agent)
  const parent = spawnSync('git', ['--git-dir', gitdir, 'rev-parse', '--verify', '-q', ref], {
    encoding: 'utf8',
  })
  const tip = parent.status === 0 ? parent.stdout.trim() : undefined
  if (tip) gitIn(gitdir, ['read-tree', tip], undefined, env)
  const blob = gitIn(gitdir, ['hash-object', '-w', '--stdin'], '{"not":"here"}')
  gitIn(
    gitdir,
    ['update-index', '--add', '--cacheinfo', `100644,${blob},${stepTreePath(agent, n)}/${file}/inner`],
    undefined,
    env,
  )
  const tree = gitIn(gitdir, ['write-tree'], undefined, env)
  const commit = gitIn(
    gitdir,
    ['commit-tree', tree, ...(tip ? ['-p', tip] : []), '-m', 'a directory in place'],
    undefined,
    {
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@t',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@t',
    },
  )
  gitIn(gitdir, ['update-ref', ref, commit])
  fs.rmSync(index, { force: true })
  return commit
}
