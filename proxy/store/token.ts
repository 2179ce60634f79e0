/**
 * The home's token (DESIGN §4, fourth round): a random secret generated at the first start into
 * `<home>/token` (mode 0600) unless `token` / `HOLDFAST_TOKEN` names one. The admin surface, the
 * MCP endpoint and the view require it; the CLI, `run` and `env` read it from the home.
 * Invariant: the file is created whole (exclusively, then never rewritten) and never readable by
 * others; an absent file reads as undefined, and a configured token always wins over the file.
 */
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { configuredToken, type HoldfastConfig } from './config'
import { homePaths } from './home'

/** 32 random bytes, base64url: 43 characters, usable in a header, a URL and a cookie. */
export function newToken(): string {
  return randomBytes(32).toString('base64url')
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
 * The home's token file, made when missing (exclusively, mode 0600: two starts racing both end
 * with the one that won). Returns its token.
 */
export function ensureTokenFile(home: string): string {
  const existing = readTokenFile(home)
  if (existing) return existing
  const file = homePaths.token(home)
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 })
  const token = newToken()
  try {
    const fd = fs.openSync(file, 'wx', 0o600)
    try {
      fs.writeSync(fd, `${token}\n`)
      fs.fsyncSync(fd)
    } finally {
      fs.closeSync(fd)
    }
    return token
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
    // Another start made it first (or left it empty while writing): theirs is the token.
    const theirs = readTokenFile(home)
    if (theirs) return theirs
    throw new Error(`${file} exists but holds no token; remove it and start again`, { cause: err })
  }
}

/** The token clients of this home use: the configured one, else the file's (undefined: none yet). */
export function homeToken(home: string, config: HoldfastConfig): string | undefined {
  return configuredToken(config) ?? readTokenFile(home)
}
