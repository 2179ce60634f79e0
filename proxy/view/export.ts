/**
 * `holdfast export`: the view's pages as one self-contained HTML file that opens offline (no
 * server, no network: the stylesheet and script inlined, links are fragments between sections). A
 * workspace exports its agents tree, every agent's timeline and step pages, and the cohorts of its
 * notches; with an agent, that agent and what hangs under it. Invariant: each section is the markup
 * the server renders for that page — the page table's (table.ts) body and trail — links and the
 * server-only form aside.
 */
import { formatStep } from '../core/naming'
import { windowedFiles } from '../report/step-files'
import { existingAgent, existingWorkspace, listSteps } from '../report/lookup'
import { workspaceData } from '../report/agent-tree'
import { cohortData } from '../report/cohort'
import { stepData } from '../report/step-data'
import { agentData } from '../report/timeline'
import { type Html } from './html'
import { exportDocument, exportSection } from './layout'
import { exportLinks as links, sectionId } from './links'
import { PAGES } from './table'

export interface ExportProgress {
  (done: number, total: number, what: string): void
}

/** The whole document for a workspace (or one agent of it, with its splits and attempts). */
export async function exportHtml(
  home: string,
  wsName: string,
  agent?: string,
  progress: ExportProgress = () => undefined,
): Promise<string> {
  const ws = await existingWorkspace(home, wsName)
  if (agent !== undefined) await existingAgent(ws, agent)
  const all = await workspaceData(ws)
  const keep = (name: string, seen = new Set<string>()): boolean => {
    if (agent === undefined || name === agent) return true
    if (seen.has(name)) return false
    seen.add(name)
    const node = all.nodes.find((n) => n.row.agent === name)
    const parent = node?.attempt?.step?.agent ?? node?.row.parent
    return parent !== undefined && parent !== null && keep(parent, seen)
  }
  const data = {
    ...all,
    nodes: all.nodes.filter((n) => keep(n.row.agent)),
    rows: all.rows.filter((r) => keep(r.agent)),
  }
  const sections: Html[] = [
    exportSection(sectionId(links.workspace(ws.name)), {
      trail: PAGES.workspace.crumbs(data, links),
      links,
      body: PAGES.workspace.body(data, links),
    }),
  ]
  const total = data.rows.reduce((s, r) => s + r.steps, 0)
  let done = 0
  for (const row of data.rows) {
    const a = row.agent
    const d = await agentData(ws, a)
    sections.push(
      exportSection(sectionId(links.agent(ws.name, a)), {
        trail: PAGES.agent.crumbs(d, links),
        links,
        body: PAGES.agent.body(d, links),
      }),
    )
    const files = windowedFiles(ws, a)
    const steps = await listSteps(ws, a)
    for (const r of d.rows) {
      const s = await stepData(ws, a, r.n, files, steps).catch(() => undefined)
      done++
      if (!s) continue
      sections.push(
        exportSection(sectionId(links.step(ws.name, a, r.n)), {
          trail: PAGES.step.crumbs(s, links),
          links,
          body: PAGES.step.body(s, links),
        }),
      )
      progress(done, total, `${a} ${formatStep(r.n)}`)
    }
  }
  const notches = new Map<string, { agent: string; n: number }>()
  for (const n of data.nodes) {
    const s = n.attempt?.step
    if (s) notches.set(`${s.agent}@${s.n}`, { agent: s.agent, n: s.n })
  }
  for (const { agent: a, n } of notches.values()) {
    const d = await cohortData(ws, a, n)
    sections.push(
      exportSection(sectionId(links.cohort(ws.name, a, n)), {
        trail: PAGES.cohort.crumbs(d, links),
        links,
        body: PAGES.cohort.body(d, links),
      }),
    )
  }
  const title = agent ? `${ws.name}/${agent}` : ws.name
  return exportDocument(
    title,
    `Exported by holdfast on ${new Date().toISOString().slice(0, 19).replace('T', ' ')} UTC: ${title}, ${total} steps. The raw records are in the workspace's git repository.`,
    sections,
  )
}
