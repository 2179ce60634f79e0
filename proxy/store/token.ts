/**
 * The home's token (DESIGN §4, fourth round): a random secret generated at the first start into
 * `<home>/token` (mode 0600) unless `token` / `HOLDFAST_TOKEN` names one. The admin surface, the
 * MCP endpoint and the view require it; the CLI, `run` and `env` read it from the home.
 * Invariant: the file appears whole (written aside, then linked in exclusively: a full disk leaves
 * no empty token behind) and is never rewritten; an absent file reads as undefined, and a
 * configured token always wins over the file. serve warns when it or holdfast.yaml is open to others.
 */
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { configuredToken, type HoldfastConfig } from './config'
import { homePaths } from './home'

/**
 * 32 random bytes, base64url: 43 characters, usable in a header, a URL and a cookie. Never with a
 * leading `-` (one draw in 64): such a token reads as an option on a command line, and sent where a
 * name goes it is refused as a bad name before it could be refused as a token out of place.
 */
export function newToken(): string {
  for (;;) {
    const token = randomBytes(32).toString('base64url')
    if (!token.startsWith('-')) return token
  }
}

/** The token in `<home>/token` (trimmed), or undefined when there is none or it is empty. */
export function readTokenFile(home: string): string | undefined {
  let text: string
  try {
    text = fs.readFileSync(homePaths.token(home), 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw err
  }
  return text.trim() || undefined
}

/**
 * The home's token file, made when missing (mode 0600: written and synced aside, then hard-linked
 * in exclusively, so two starts racing both end with the one that won and a failed write leaves
 * nothing). Returns its token.
 */
export function ensureTokenFile(home: string): string {
  const existing = readTokenFile(home)
  if (existing) return existing
  const file = homePaths.token(home)
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 })
  const token = newToken()
  const aside = `${file}.${process.pid}.tmp`
  try {
    const fd = fs.openSync(aside, 'w', 0o600)
    try {
      fs.writeSync(fd, `${token}\n`)
      fs.fsyncSync(fd)
    } finally {
      fs.closeSync(fd)
    }
    fs.linkSync(aside, file)
    return token
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
    // Another start made it first: theirs is the token.
    const theirs = readTokenFile(home)
    if (theirs) return theirs
    throw new Error(`${file} exists but holds no token; remove it and start again`, { cause: err })
  } finally {
    fs.rmSync(aside, { force: true })
  }
}

/**
 * The home's secrets that group or others may read or write (holdfast.yaml, the token file), each
 * as the sentence serve warns with. Nothing on a system without POSIX modes (Windows).
 */
export function exposedSecrets(home: string): string[] {
  if (process.platform === 'win32') return []
  const out: string[] = []
  for (const file of [homePaths.config(home), homePaths.token(home)]) {
    let mode: number
    try {
      mode = fs.statSync(file).mode & 0o777
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue
      throw err
    }
    if ((mode & 0o066) === 0) continue
    const who = [mode & 0o060 ? 'group' : '', mode & 0o006 ? 'others' : ''].filter(Boolean).join(' and ')
    const what = [mode & 0o044 ? 'read' : '', mode & 0o022 ? 'write' : ''].filter(Boolean).join(' and ')
    out.push(
      `${file} is open to ${who} (mode ${mode.toString(8).padStart(4, '0')}: they can ${what} it); run: chmod 600 ${file}`,
    )
  }
  return out
}

/** The token clients of this home use: the configured one, else the file's (undefined: none yet). */
export function homeToken(home: string, config: HoldfastConfig): string | undefined {
  return configuredToken(config) ?? readTokenFile(home)
}
