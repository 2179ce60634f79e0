/**
 * Cohorts fired by a git commit: a new commit on `attempts/<name>` whose message carries an
 * `Attempt-From:` trailer and one or more `Attempt-Role:` trailers (optional `Attempt-Skill:`,
 * `Attempt-Parent:`) fires that cohort, the message without its trailers as the goal. Invariant:
 * each commit fires once — `<ws>/attempts-fired/<commit>` is created exclusively before firing —
 * and the hook returns at once: the cohort runs in a detached child whose outcome is in the ops log.
 */
import fs from 'node:fs'
import path from 'node:path'
import { spawnChild } from '../process/spawn'
import { loadConfig } from '../store/config'
import { readCommitInfo } from '../store/git'
import { homePaths } from '../store/home'
import { appendOps } from '../store/ops-log'
import { Workspace } from '../store/workspace'
import { fireCohort, type CohortRequest } from './fire'

const TRAILER = /^([A-Za-z][A-Za-z0-9-]*):\s*(.*)$/

/** The cohort a commit message asks for, or undefined when it carries no Attempt-From / Attempt-Role. */
export function parseAttemptMessage(message: string, ws: string): CohortRequest | undefined {
  const paragraphs = message.replace(/\s+$/, '').split(/\n\s*\n/)
  const last = paragraphs[paragraphs.length - 1] ?? ''
  const lines = last.split('\n')
  if (paragraphs.length < 2 || !lines.every((l) => TRAILER.test(l))) return undefined
  const values = (key: string): string[] =>
    lines
      .map((l) => TRAILER.exec(l))
      .filter((m): m is RegExpExecArray => m !== null && (m[1] as string).toLowerCase() === key.toLowerCase())
      .map((m) => (m[2] as string).trim())
  const from = values('Attempt-From')[0]
  const roles = values('Attempt-Role')
  if (!from || roles.length === 0) return undefined
  const goal = paragraphs.slice(0, -1).join('\n\n').trim()
  const parent = values('Attempt-Parent')[0]
  return { ws, from, goal, roles, skills: values('Attempt-Skill'), ...(parent ? { parent } : {}) }
}

/** Claim a commit for firing: true the first time only (an exclusive create survives re-pushes and gc replays). */
export function claimCommit(home: string, ws: string, commit: string): boolean {
  const dir = path.join(homePaths.workspace(home, ws), 'attempts-fired')
  fs.mkdirSync(dir, { recursive: true })
  try {
    fs.writeFileSync(path.join(dir, commit), `${new Date().toISOString()}\n`, { flag: 'wx' })
    return true
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw err
  }
}

/**
 * In the hook (`committed`): for each moved `attempts/*` ref whose new commit asks for a cohort and
 * was never fired, start a detached `holdfast hook fire-attempts` and return at once.
 */
export async function fireFromRefs(
  home: string,
  ws: string,
  moved: { ref: string; new: string }[],
): Promise<number> {
  const repo = new Workspace(home, ws).repo
  let started = 0
  for (const u of moved) {
    if (!u.ref.startsWith('refs/heads/attempts/') || /^0+$/.test(u.new)) continue
    const info = await readCommitInfo(repo, u.new).catch(() => undefined)
    if (!info || !parseAttemptMessage(info.message, ws) || !claimCommit(home, ws, u.new)) continue
    const child = spawnChild(
      process.execPath,
      [
        ...process.execArgv,
        process.argv[1] as string,
        'hook',
        'fire-attempts',
        '--home',
        home,
        '--ws',
        ws,
        '--commit',
        u.new,
      ],
      { detached: true, stdio: 'ignore', cwd: home },
    )
    child.unref()
    started++
  }
  return started
}

/** The detached child: fire the cohort a commit asks for; everything it does lands in the ops log. */
export async function fireFromCommit(home: string, ws: string, commit: string): Promise<void> {
  const info = await readCommitInfo(new Workspace(home, ws).repo, commit)
  const req = parseAttemptMessage(info.message, ws)
  if (!req) return
  try {
    await fireCohort(home, loadConfig(home), req, 'hook')
  } catch (err) {
    appendOps(home, {
      ts: new Date().toISOString(),
      argv: [
        'attempt',
        ws,
        '--from',
        req.from,
        '--goal',
        req.goal,
        ...req.roles.flatMap((r) => ['--role', r]),
      ],
      cwd: process.cwd(),
      exit: 1,
      origin: 'hook',
      stdout: '',
      stderr: `holdfast: commit ${commit.slice(0, 8)} on attempts/*: ${(err as Error).message}\n`,
    })
  }
}
