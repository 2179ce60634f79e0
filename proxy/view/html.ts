/**
 * HTML made safely: a tagged template whose interpolations are escaped unless they are already
 * `Html` (made by this template or `raw`), and the number formats every page shares. Pure.
 * Invariant: text from a record (names, prompts, answers, headers) reaches a page only escaped.
 */

/** A piece of markup known to be safe. */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text
  }
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
}

/** Text escaped for an element's content or a quoted attribute. */
export function esc(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] as string)
}

export type Part = Html | string | number | null | undefined | false | readonly Part[]

function render(part: Part): string {
  if (part === null || part === undefined || part === false) return ''
  if (part instanceof Html) return part.text
  if (Array.isArray(part)) return (part as readonly Part[]).map(render).join('')
  return esc(String(part))
}

/** `markup\`<td>${name}</td>\``: interpolations escaped (arrays joined, null/false empty). */
export function markup(strings: TemplateStringsArray, ...parts: Part[]): Html {
  let out = strings[0] as string
  for (let i = 0; i < parts.length; i++) out += render(parts[i] as Part) + (strings[i + 1] as string)
  return new Html(out)
}

/** Markup made elsewhere and known to be safe (an SVG this module built, an asset). */
export const raw = (text: string): Html => new Html(text)

/** Thousands grouped with a thin space: 1 234 567; '-' for none. */
export function fmtTokens(n: number | null | undefined): string {
  if (n === null || n === undefined) return '-'
  return String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, '\u202f')
}

/** Dollars: $1.23, or four places under a cent; '-' for none. */
export { fmtUsd } from '../core/saving-words'

/** A share as a whole percent (99%); '-' for none. */
export function fmtShare(share: number | null | undefined): string {
  return share === null || share === undefined ? '-' : `${Math.round(share * 100)}%`
}

/** Milliseconds: 840 ms, 12.3 s; '-' for none. */
export function fmtMs(n: number | null | undefined): string {
  if (n === null || n === undefined) return '-'
  return n >= 10_000 ? `${(n / 1000).toFixed(1)} s` : `${Math.round(n)} ms`
}

/** An ISO time as `2026-12-06 05:03:31` (UTC, as recorded); '-' for none. */
export function fmtTime(iso: string | null | undefined): string {
  return iso ? iso.replace('T', ' ').slice(0, 19) : '-'
}
