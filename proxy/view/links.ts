/**
 * Where each page lives: deep-linkable URLs under `/ui/` on a server, fragments (`#/w/<ws>/…`)
 * inside an exported file, where every page is a section of one document. Pure. Invariant: a name
 * is always percent-encoded as one path segment, so no name can reach another page.
 */
import { formatStep } from '../core/naming'

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

const seg = encodeURIComponent

/** A page's path below the root (`/w/<ws>/a/<agent>`), the same in both modes. */
export const paths = {
  workspace: (ws: string) => `/w/${seg(ws)}`,
  agent: (ws: string, agent: string) => `/w/${seg(ws)}/a/${seg(agent)}`,
  step: (ws: string, agent: string, n: number) => `/w/${seg(ws)}/a/${seg(agent)}/s/${formatStep(n)}`,
  cohort: (ws: string, agent: string, n: number) => `/w/${seg(ws)}/cohort/${seg(agent)}@${formatStep(n)}`,
}

export const serverLinks: Links = {
  mode: 'server',
  home: () => '/ui/',
  workspace: (ws) => `/ui${paths.workspace(ws)}`,
  agent: (ws, a) => `/ui${paths.agent(ws, a)}`,
  step: (ws, a, n) => `/ui${paths.step(ws, a, n)}`,
  cohort: (ws, a, n) => `/ui${paths.cohort(ws, a, n)}`,
  raw: (ws, a, n, file) => `/ui${paths.step(ws, a, n)}/raw/${seg(file)}`,
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
