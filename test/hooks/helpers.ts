/**
 * Shared by the hook tests: a temp home with provider rows, a workspace created the way the proxy
 * creates one, and real git run asynchronously (an in-process proxy keeps answering the hook's
 * event while git waits for the hook). Invariant: every temp dir made here is removed by `cleanup()`.
 */
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import pino from 'pino'
import type { Logger } from '../../proxy/process/log'
import { hookPreparer } from '../../proxy/store/hook-install'
import { Workspace } from '../../proxy/store/workspace'

export const ZERO = '0'.repeat(40)
export const ROWS_YAML = `providers:
  anthropic: {dialect: anthropic, base_url: http://127.0.0.1:9}
  openai: {dialect: openai, base_url: http://127.0.0.1:9/v1}
`
/** Author and committer for every commit the tests make (no global git config needed). */
export const IDENTITY = ['-c', 'user.name=holdfast test', '-c', 'user.email=test@holdfast.invalid']

const made: string[] = []

export function tempDir(prefix = 'holdfast-hooks-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix))
  made.push(dir)
  return dir
}

export function cleanup(): void {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
}

/** A home with `holdfast.yaml` declaring the rows `anthropic` and `openai`, and workspace `ws` created. */
export async function homeWithWorkspace(
  ws = 'demo',
  home = tempDir(),
): Promise<{ home: string; repo: string }> {
  fs.writeFileSync(path.join(home, 'holdfast.yaml'), ROWS_YAML)
  // As serve makes it: with its git hook.
  const w = new Workspace(home, ws, { prepare: hookPreparer() })
  await w.ensure()
  return { home, repo: w.repo.gitdir }
}

export interface GitRun {
  code: number | null
  stdout: string
  stderr: string
  ms: number
}

export interface RunOptions {
  env?: NodeJS.ProcessEnv
  input?: string
}

/** `cmd <args>` in `cwd` (stdin: `input`), without blocking the event loop. */
export function run(cmd: string, cwd: string, args: string[], opts: RunOptions = {}): Promise<GitRun> {
  const started = performance.now()
  return new Promise((resolve) => {
    const stdin = opts.input === undefined ? 'ignore' : 'pipe'
    const child = spawn(cmd, args, {
      cwd,
      env: { ...process.env, ...opts.env },
      stdio: [stdin, 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()))
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()))
    child.once('close', (code) => resolve({ code, stdout, stderr, ms: performance.now() - started }))
    child.stdin?.on('error', () => undefined) // a child that exits without reading its input
    child.stdin?.end(opts.input)
  })
}

export const git = (cwd: string, args: string[], opts: RunOptions = {}): Promise<GitRun> =>
  run('git', cwd, args, opts)

/** Like `git`, but fails the test on a non-zero exit; returns trimmed stdout. */
export async function gitOk(cwd: string, args: string[], opts: RunOptions = {}): Promise<string> {
  const r = await git(cwd, args, opts)
  if (r.code !== 0) throw new Error(`git ${args.join(' ')} exited ${r.code}: ${r.stderr}`)
  return r.stdout.trim()
}

/** A commit object in the bare repository whose tree holds just `files` (plumbing: no ref moves, no hook). */
export async function commitObject(
  repo: string,
  files: Record<string, string>,
  parent?: string,
): Promise<string> {
  const entries: string[] = []
  for (const [name, text] of Object.entries(files)) {
    const blob = await gitOk(repo, ['hash-object', '-w', '--stdin'], { input: text })
    entries.push(`100644 blob ${blob}\t${name}\n`)
  }
  const tree = await gitOk(repo, ['mktree'], { input: entries.join('') })
  const p = parent ?? (await tipOf(repo))
  return gitOk(repo, [...IDENTITY, 'commit-tree', tree, '-p', p, '-m', 'config: made by a test'])
}

/** A clone of the workspace repository (on config/default) with `providers.yaml` set to `text` and committed. */
export async function cloneWithProviders(repo: string, text: string): Promise<string> {
  const dir = path.join(tempDir('holdfast-clone-'), 'wt')
  await gitOk(os.tmpdir(), ['clone', '-q', repo, dir])
  await editProviders(dir, text)
  return dir
}

export async function editProviders(clone: string, text: string): Promise<string> {
  fs.writeFileSync(path.join(clone, 'providers.yaml'), text)
  await gitOk(clone, [...IDENTITY, 'commit', '-q', '-am', 'config: edit providers.yaml'])
  return gitOk(clone, ['rev-parse', 'HEAD'])
}

export const tipOf = (repo: string, ref = 'config/default'): Promise<string> =>
  gitOk(repo, ['rev-parse', '--verify', '-q', ref])

/** A debug-level logger whose lines a test can read back (parsed JSON). */
export function captureLog(): { log: Logger; entries: () => Record<string, unknown>[] } {
  const lines: string[] = []
  const log = pino({ level: 'debug' }, { write: (s: string) => void lines.push(s) })
  return { log, entries: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) }
}
