/**
 * Names: a workspace, agent or client name is one path component and one git ref component;
 * a tool name a provider accepts is "callable"; step numbers are zero-padded to three digits.
 * Invariant: a name that fails is refused with a sentence naming the value; it never becomes a path.
 */
import { createHash } from 'node:crypto'
import { HoldfastError } from './errors'

/**
 * The longest workspace, agent, client, role, lineage or skill name, in UTF-8 bytes. A component
 * can be 255 bytes; holdfast adds to a name on disk and in git (`<agent>.lock`, `<agent>.json`,
 * `<agent>.sub-<40>` splits, `<agent>-<stamp>-<hex>` attempts, `.tmp-…` writes), so 100 leaves
 * room for every one of them.
 */
export const MAX_NAME_BYTES = 100

export type NameKind = 'workspace' | 'agent' | 'client' | 'role' | 'tool' | 'lineage' | 'skill'

/** Non-empty, not `.` or `..`, no `/`, `\` or NUL. */
export function isComponent(s: string): boolean {
  return s.length > 0 && s !== '.' && s !== '..' && !/[/\\\0]/.test(s)
}

/**
 * One component of a git ref, as `git check-ref-format` accepts it: no ASCII control
 * characters, space, `~ ^ : ? * [ \`, no `..` or `@{`, not `@` alone, does not start with
 * `.` or `-` (git refuses `-` for branch names), and does not end with `.` or `.lock`.
 * https://git-scm.com/docs/git-check-ref-format
 */
export function isRefComponent(s: string): boolean {
  if (!isComponent(s)) return false
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x20\x7f~^:?*[\\]/.test(s)) return false
  if (s.includes('..') || s.includes('@{') || s === '@') return false
  if (s.startsWith('.') || s.startsWith('-')) return false
  if (s.endsWith('.') || s.endsWith('.lock')) return false
  return true
}

/** 1–64 of ASCII letters, digits, `_`, `-`: what providers accept as a tool name. */
export function isCallable(s: string): boolean {
  return /^[A-Za-z0-9_-]{1,64}$/.test(s)
}

/** `undefined` when `value` is a usable name of that kind, else one sentence naming the value. */
export function checkName(kind: NameKind, value: string): string | undefined {
  const bytes = Buffer.byteLength(value, 'utf8')
  if (kind !== 'tool' && bytes > MAX_NAME_BYTES) {
    return `${kind} name ${JSON.stringify(value.slice(0, 24) + '…')} is ${bytes} bytes long: a name is at most ${MAX_NAME_BYTES} bytes of UTF-8`
  }
  const shown = JSON.stringify(value)
  if (!isComponent(value)) {
    return `${kind} name ${shown} is not usable: a name is one path component (non-empty, not "." or "..", no "/", "\\" or NUL)`
  }
  if (kind !== 'tool' && !isRefComponent(value)) {
    return `${kind} name ${shown} is not usable: it must also be a valid git ref component (no spaces, control characters, ~ ^ : ? * [, "..", "@{", no leading "." or "-", no trailing "." or ".lock")`
  }
  return undefined
}

/** The name itself, or a `HoldfastError('BAD_NAME')` carrying checkName's sentence. */
export function assertName(kind: NameKind, value: string): string {
  const problem = checkName(kind, value)
  if (problem !== undefined) throw new HoldfastError('BAD_NAME', problem)
  return value
}

/**
 * A name holdfast derives (a split `<agent>.sub-<id>`, an attempt `<parent>-<stamp>-<hex>`) made to
 * fit MAX_NAME_BYTES: as it is when it fits, else its first bytes (cut at a character boundary)
 * and `-` and 8 hex digits of its hash, so two long names stay two names, the same one each time.
 */
export function fitName(name: string): string {
  if (Buffer.byteLength(name, 'utf8') <= MAX_NAME_BYTES) return name
  const hash = createHash('sha1').update(name).digest('hex').slice(0, 8)
  let head = Buffer.from(name, 'utf8')
    .subarray(0, MAX_NAME_BYTES - 9)
    .toString('utf8')
  head = head.replace(/\uFFFD+$/, '') // a character cut in half
  head = head.replace(/[.]+$/, '').replace(/\.lock$/, '') // a ref component must not end so
  return `${head}-${hash}`
}

/** 1 → `001`, 999 → `999`, 1000 → `1000`. */
export function formatStep(n: number): string {
  if (!Number.isSafeInteger(n) || n < 1) throw new RangeError(`step number ${n} is not a positive integer`)
  return String(n).padStart(3, '0')
}

/** The number of a canonical step name (`001`, `1000`); undefined for anything else (`1`, `0001`, `000`). */
export function parseStep(s: string): number | undefined {
  if (!/^\d{3,}$/.test(s)) return undefined
  const n = Number(s)
  if (!Number.isSafeInteger(n) || n < 1 || formatStep(n) !== s) return undefined
  return n
}

/** Numeric order of step names (`999` before `1000`), for Array.prototype.sort. */
export function compareSteps(a: string, b: string): number {
  return (parseStep(a) ?? 0) - (parseStep(b) ?? 0) || (a < b ? -1 : a > b ? 1 : 0)
}
