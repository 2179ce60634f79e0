/**
 * Shared by the plugin tests: Claude Code request fixtures, posting a fixture or a body to a
 * proxy, reading a step's meta.json, and small plugin definitions built from closures.
 * Invariant: helpers only read; every plugin object here is plain (no module loading in jest).
 */
import fs from 'node:fs'
import path from 'node:path'
import type { StepMeta } from '../../generated/meta'
import { ROOT, git } from '../support/harness'

export interface Fixture {
  note: string
  path: string
  headers: Record<string, string>
  body: Record<string, unknown>
}

export const FIXTURES = path.join(ROOT, 'test', 'fixtures', 'claude-code')
/** The tutorial's example plugin (plugins/examples/long-context). */
export const EXAMPLE = path.join(ROOT, 'plugins', 'examples', 'long-context', 'index.js')

/** Claude Code versions whose real requests are captured under test/fixtures/claude-code/<version>/. */
export const CAPTURED_VERSIONS = ['2.1.197', '2.1.332'] as const

/** A fixture by its path under test/fixtures/claude-code, without `.json` (`2.1.197/plain/main`, `modelled/quota`). */
export function fixture(name: string): Fixture {
  return JSON.parse(fs.readFileSync(path.join(FIXTURES, `${name}.json`), 'utf8')) as Fixture
}

const HINTS = ['x-claude-code-request-class', 'x-claude-code-agent-id', 'x-claude-code-parent-agent-id']

/** A modelled fixture without its hint headers and session header (as the heuristics alone see it). */
export function withoutHints(f: Fixture): Fixture {
  const headers = Object.fromEntries(
    Object.entries(f.headers).filter(([k]) => !HINTS.includes(k) && k !== 'x-claude-code-session-id'),
  )
  return { ...f, headers }
}

export interface Posted {
  status: number
  error: string | null
  text: string
}

/** POST a body to `<base><path>` with anthropic defaults; `headers` add to or replace them. */
export async function post(
  base: string,
  body: unknown,
  headers: Record<string, string> = {},
  urlPath = '/v1/messages',
): Promise<Posted> {
  const res = await fetch(`${base}${urlPath}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', ...headers },
    body: JSON.stringify(body),
  })
  return { status: res.status, error: res.headers.get('x-holdfast-error'), text: await res.text() }
}

export function postFixture(base: string, f: Fixture): Promise<Posted> {
  return post(base, f.body, f.headers, f.path)
}

/** meta.json of a committed step. */
export function meta(repo: string, agent: string, step: string): StepMeta {
  return JSON.parse(git(repo, 'show', `agents/${agent}:steps/${agent}/${step}/meta.json`)) as StepMeta
}

/** The agents (branches under agents/) of a workspace repository. */
export function agentsOf(repo: string): string[] {
  return git(repo, 'for-each-ref', '--format=%(refname:short)', 'refs/heads/agents/')
    .split('\n')
    .filter(Boolean)
    .map((r) => r.replace(/^agents\//, ''))
    .sort()
}

export const ask = (text: string, extra: object = {}) => ({
  model: 'claude-sonnet-4-5',
  max_tokens: 16,
  messages: [{ role: 'user', content: text }],
  ...extra,
})
