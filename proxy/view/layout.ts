/**
 * The frame every page shares: the document head (assets linked on a server, inlined in an export),
 * the breadcrumbs, and the body's live-update address. Pure.
 * Invariant: a page's content is the same markup in both modes; only links and assets differ.
 */
import { createHash } from 'node:crypto'
import { CLIENT_JS, CSS, CSS_NAME, JS_NAME } from './assets'
import { type Html, markup, raw } from './html'
import type { Links } from './links'

export interface Crumb {
  label: string
  href?: string
}

/** The breadcrumbs: holdfast › ws › agent › step. */
export function crumbs(links: Links, trail: readonly Crumb[]): Html {
  const all: Crumb[] = [{ label: 'holdfast', href: links.home() }, ...trail]
  return markup`<nav class="crumbs">
    ${all.map((c, i) => [
      i > 0 ? ' › ' : '',
      c.href ? markup`<a href="${c.href}">${c.label}</a>` : markup`<b>${c.label}</b>`,
    ])}<span class="live-dot" title="live"></span>
  </nav>`
}

/** A whole document for one page on a server. */
export function serverPage(opts: {
  title: string
  trail: readonly Crumb[]
  links: Links
  body: Html
  live?: string
}): string {
  return markup`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="same-origin"><title>${opts.title} · holdfast</title>
<link rel="stylesheet" href="/ui/assets/${CSS_NAME}"></head>
<body${opts.live ? markup` data-live="${opts.live}"` : ''}><header>${crumbs(opts.links, opts.trail)}</header>
<main>${opts.body}</main><script src="/ui/assets/${JS_NAME}" defer></script></body></html>
`.text
}

/** One page as a section of an exported document. */
export function exportSection(id: string, opts: { trail: readonly Crumb[]; links: Links; body: Html }): Html {
  return markup`<section class="page" id="${id}">
    <header>${crumbs(opts.links, opts.trail)}</header>
    <main>${opts.body}</main>
  </section> `
}

/** A CSP source for exactly this inline text. */
const sha256 = (text: string): string => `'sha256-${createHash('sha256').update(text).digest('base64')}'`

/**
 * The export's content policy, as strict as the served pages' header (answer.ts PAGE_HEADERS) for
 * a file that opens offline: its one inline stylesheet and script by their hashes (nothing else
 * inline, nothing from anywhere), images only as data:, no form, no base, no connection.
 * frame-ancestors is left out: a `<meta>` policy cannot carry it.
 */
export const EXPORT_CSP = [
  "default-src 'none'",
  `script-src ${sha256(CLIENT_JS)}`,
  `style-src ${sha256(CSS)}`,
  'img-src data:',
  "form-action 'none'",
  "base-uri 'none'",
].join('; ')

/** The exported document: every section, the stylesheet and the script inlined under its policy. */
export function exportDocument(title: string, note: string, sections: readonly Html[]): string {
  // `</script` cannot occur in the script; the stylesheet has no `</style`. Each is inlined
  // exactly, nothing around it, so the policy's hashes are of what the browser sees.
  return markup`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta http-equiv="Content-Security-Policy" content="${EXPORT_CSP}" />
        <meta name="viewport" content="width=device-width,initial-scale=1" />
        <title>${title} · holdfast export</title>
        <style>${raw(CSS)}</style>
      </head>
      <body>
        ${sections}
        <footer><main class="export-note">${note}</main></footer>
        <script>${raw(CLIENT_JS)}</script>
      </body>
    </html> `.text
}
