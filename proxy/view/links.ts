/**
 * Where each page lives: deep-linkable URLs under `/ui/` on a server, fragments (`#/w/<ws>/…`)
 * inside an exported file, where every page is a section of one document. Every link is built from
 * the route list's patterns (routes.ts `pathOf`), the same patterns that parse a request. Pure.
 * Invariant: a name is always percent-encoded as one path segment, so no name can reach another page.
 */
import { pathOf } from './routes'

export interface Links {
  readonly mode: 'server' | 'export'
  home(): string
  workspace(ws: string): string
  agent(ws: string, agent: string): string
  step(ws: string, agent: string, n: number): string
  cohort(ws: string, agent: string, n: number): string
  /** The raw bytes of a step's file as recorded; undefined in an export (the record is in git). */
  raw(ws: string, agent: string, n: number, file: string): string | undefined
}

/** The server's root of the view; a page's path below it is its fragment in an export. */
const UI = '/ui'
const below = (p: string): string => p.slice(UI.length)

/** A page's path below the root (`/w/<ws>/a/<agent>`), the same in both modes. */
export const paths = {
  workspace: (ws: string) => below(pathOf('workspace', { ws })),
  agent: (ws: string, agent: string) => below(pathOf('agent', { ws, agent })),
  step: (ws: string, agent: string, n: number) => below(pathOf('step', { ws, agent, n })),
  cohort: (ws: string, agent: string, n: number) => below(pathOf('cohort', { ws, agent, n })),
}

export const serverLinks: Links = {
  mode: 'server',
  home: () => pathOf('home', {}),
  workspace: (ws) => pathOf('workspace', { ws }),
  agent: (ws, agent) => pathOf('agent', { ws, agent }),
  step: (ws, agent, n) => pathOf('step', { ws, agent, n }),
  cohort: (ws, agent, n) => pathOf('cohort', { ws, agent, n }),
  raw: (ws, agent, n, file) => pathOf('raw', { ws, agent, n, file }),
}

export const exportLinks: Links = {
  mode: 'export',
  home: () => '#',
  workspace: (ws) => `#${paths.workspace(ws)}`,
  agent: (ws, a) => `#${paths.agent(ws, a)}`,
  step: (ws, a, n) => `#${paths.step(ws, a, n)}`,
  cohort: (ws, a, n) => `#${paths.cohort(ws, a, n)}`,
  raw: () => undefined,
}

/** The id a page's section has in an export: its fragment, decoded as the browser decodes it. */
export const sectionId = (fragmentHref: string): string => decodeURIComponent(fragmentHref.slice(1))
