/**
 * Runs the real Codex CLI (the pinned devDependency @openai/codex) non-interactively against a
 * Responses endpoint the caller names: `codex exec` with its own CODEX_HOME and HOME in a temp dir,
 * a custom provider (`wire_api = "responses"`) whose base URL ends in `/v1`, a dummy key, and an
 * environment of PATH only, so no key or base URL of the caller's reaches it.
 * Invariant: nothing in the run reaches past the given base URL (analytics, the plugin sync and the
 * update check are off: with them on, Codex looks up ab.chatgpt.com, chatgpt.com, api.github.com and
 * runs `git ls-remote` on github.com); the run is bounded by `timeoutMs`, after which its whole
 * process group is killed; the temp dir is removed unless `keep` is set.
 */
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

const PACKAGE = path.dirname(require.resolve('@openai/codex/package.json'))
/** The Node launcher; it finds the native binary in the platform package (@openai/codex-linux-x64 …). */
export const CODEX_BIN = path.join(PACKAGE, 'bin', 'codex.js')
export const CODEX_VERSION = (
  JSON.parse(fs.readFileSync(path.join(PACKAGE, 'package.json'), 'utf8')) as {
    version: string
  }
).version

/** The provider id in config.toml and the variable its `env_key` names. */
export const CODEX_PROVIDER = 'holdfast-test'
export const CODEX_KEY_ENV = 'HOLDFAST_TEST_API_KEY'
export const CODEX_DUMMY_KEY = 'sk-holdfast-test-dummy'

export interface CodexOptions {
  /** The provider's base URL, `/v1` included: Codex posts to `${baseUrl}/responses`. */
  baseUrl: string
  /** The task, passed as `codex exec`'s prompt argument. */
  prompt: string
  /** Default `gpt-fake-1` (Codex warns that it has no metadata for it and uses its fallback). */
  model?: string
  /** Kill the run after this long (default 60 s). */
  timeoutMs?: number
  /** Extra `-c key=value` overrides (TOML values), after the helper's config. */
  config?: string[]
  /** `--sandbox` mode for the commands the model runs (default workspace-write: the work dir only). */
  sandbox?: 'read-only' | 'workspace-write' | 'danger-full-access'
  /** Extra environment for Codex and the commands it runs. */
  env?: NodeJS.ProcessEnv
  /** Keep the temp dir (home, CODEX_HOME, work dir) for inspection; the caller removes it. */
  keep?: boolean
}

export interface CodexRun {
  /** Exit code, or null when a signal ended it. */
  code: number | null
  signal: NodeJS.Signals | null
  /** `codex exec` prints only the final agent message on stdout. */
  stdout: string
  /** Progress, the commands it ran, warnings and errors. */
  stderr: string
  timedOut: boolean
  ms: number
  /** The temp dir, `work/` its working root (removed after the run unless `keep`). */
  dir: string
}

/** The config.toml the helper writes: one local responses provider, no retries, nothing phoning home. */
export function codexConfig(baseUrl: string, model = 'gpt-fake-1'): string {
  return [
    `model = ${JSON.stringify(model)}`,
    `model_provider = "${CODEX_PROVIDER}"`,
    'check_for_update_on_startup = false',
    '',
    '[analytics]',
    'enabled = false',
    '',
    '[features]',
    'plugins = false',
    '',
    `[model_providers.${CODEX_PROVIDER}]`,
    'name = "holdfast test provider"',
    `base_url = ${JSON.stringify(baseUrl)}`,
    'wire_api = "responses"',
    `env_key = "${CODEX_KEY_ENV}"`,
    'request_max_retries = 0',
    'stream_max_retries = 0',
    'stream_idle_timeout_ms = 30000',
    '',
  ].join('\n')
}

/** The `codex exec` arguments after the launcher, for a work dir and options. */
export function codexArgs(work: string, opts: CodexOptions): string[] {
  return [
    'exec',
    '--skip-git-repo-check',
    '--color',
    'never',
    '--sandbox',
    opts.sandbox ?? 'workspace-write',
    '--cd',
    work,
    ...(opts.config ?? []).flatMap((kv) => ['-c', kv]),
    opts.prompt,
  ]
}

/** Run `codex exec` once; resolves when it exits or is killed at the timeout. */
export function runCodex(opts: CodexOptions): Promise<CodexRun> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'holdfast-codex-'))
  const home = path.join(dir, 'home')
  const codexHome = path.join(dir, 'codex-home')
  const work = path.join(dir, 'work')
  for (const d of [home, codexHome, work]) fs.mkdirSync(d)
  fs.writeFileSync(path.join(codexHome, 'config.toml'), codexConfig(opts.baseUrl, opts.model))

  const started = Date.now()
  const child = spawn(process.execPath, [CODEX_BIN, ...codexArgs(work, opts)], {
    cwd: work,
    env: {
      PATH: process.env.PATH,
      HOME: home,
      CODEX_HOME: codexHome,
      [CODEX_KEY_ENV]: CODEX_DUMMY_KEY,
      ...opts.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group: on Node 20 the launcher spawns the native binary, and a timeout kills both.
    detached: true,
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  let timedOut = false
  const timer = setTimeout(() => {
    timedOut = true
    killGroup(child.pid)
  }, opts.timeoutMs ?? 60_000)

  return new Promise((resolve, reject) => {
    child.once('error', (err) => {
      clearTimeout(timer)
      reject(err)
    })
    child.once('close', (code, signal) => {
      clearTimeout(timer)
      killGroup(child.pid) // anything the run left behind in its group (a command still running)
      if (!opts.keep) fs.rmSync(dir, { recursive: true, force: true })
      resolve({ code, signal, stdout, stderr, timedOut, ms: Date.now() - started, dir })
    })
  })
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return
  try {
    process.kill(-pid, 'SIGKILL')
  } catch {
    // the group is gone already
  }
}

/** Where a `holdfast run -- codex` test runs: a holdfast home, a CODEX_HOME, a work tree and a user HOME. */
export interface CodexDirs {
  home: string
  codexHome: string
  work: string
  user: string
}

/**
 * The directories of a `holdfast run -- codex` test under `dir`, made, with the CODEX_HOME holding a
 * user's config for the built-in provider (no `model_provider` of holdfast's) that phones nothing home.
 */
export function userCodexDirs(dir: string): CodexDirs {
  const d = {
    home: path.join(dir, 'holdfast'),
    codexHome: path.join(dir, 'codex-home'),
    work: path.join(dir, 'work'),
    user: path.join(dir, 'user'),
  }
  for (const p of Object.values(d)) fs.mkdirSync(p, { recursive: true })
  fs.writeFileSync(
    path.join(d.codexHome, 'config.toml'),
    'model = "gpt-fake-1"\ncheck_for_update_on_startup = false\n\n[analytics]\nenabled = false\n\n[features]\nplugins = false\n',
  )
  return d
}

/** The environment a user's Codex runs with in such a test. */
export const userCodexEnv = (d: CodexDirs): Record<string, string> => ({
  HOME: d.user,
  CODEX_HOME: d.codexHome,
  OPENAI_API_KEY: CODEX_DUMMY_KEY,
})
