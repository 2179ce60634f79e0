/**
 * view/export: one document with a section per page — the workspace, each agent, each step, the
 * cohorts of its notches — that references nothing outside itself and carries its content policy;
 * an agent's export keeps that agent and what hangs under it.
 */
import { fireCohort } from '../../../proxy/attempts/fire'
import { exportHtml } from '../../../proxy/view/export'
import { EXPORT_CSP } from '../../../proxy/view/layout'
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream'
import { startProxy, type Proxy } from '../../support/harness'
import { KEY_ENV, keyedRows, recordDemo } from '../../support/view-demo'

let fake: FakeUpstream
let p: Proxy
beforeAll(async () => {
  process.env[KEY_ENV] = 'sk-view'
  fake = await startFakeUpstream()
  p = await startProxy({ fake, config: { providers: keyedRows(fake.anthropicBaseUrl) } })
  await recordDemo(p, 'demo')
  await fireCohort(
    p.home,
    p.server.ctx.config,
    { ws: 'demo', from: 'main@002', goal: 'Again.', roles: ['reviewer'], skills: [] },
    'cli',
  )
  await p.settled()
})
afterAll(async () => {
  await p.close()
  await fake.close()
})

const ids = (doc: string): string[] =>
  [...doc.matchAll(/<section class="page" id="([^"]+)"/g)].map((m) => m[1] as string)

describe('an export', () => {
  it('has a section for the workspace, every agent and step, and each notch’s cohort, and nothing from outside', async () => {
    const doc = await exportHtml(p.home, 'demo')
    const s = ids(doc)
    expect(s[0]).toBe('/w/demo')
    expect(s).toEqual(
      expect.arrayContaining([
        '/w/demo/a/main',
        '/w/demo/a/main/s/006',
        '/w/demo/a/main.sub-ab12/s/002',
        '/w/demo/cohort/main@002',
      ]),
    )
    expect(s.filter((id) => /\/s\/\d+$/.test(id))).toHaveLength(6 + 2 + 1 + 1)
    expect(doc).not.toMatch(/(src|href)="(https?:|\/\/|\/ui\/)/)
    expect(doc).not.toContain('<form')
  })

  it('carries the content policy of an export in its head, for the workspace and for one agent', async () => {
    for (const doc of [await exportHtml(p.home, 'demo'), await exportHtml(p.home, 'demo', 'main')]) {
      const head = doc.slice(0, doc.indexOf('</head>'))
      expect(head).toContain(
        `<meta http-equiv="Content-Security-Policy" content="${EXPORT_CSP.replaceAll("'", '&#39;')}" />`,
      )
    }
  })

  it('of one agent keeps that agent and its splits and attempts, not its siblings’ parents', async () => {
    const s = ids(await exportHtml(p.home, 'demo', 'main.sub-ab12'))
    expect(s).toEqual([
      '/w/demo',
      '/w/demo/a/main.sub-ab12',
      '/w/demo/a/main.sub-ab12/s/001',
      '/w/demo/a/main.sub-ab12/s/002',
    ])
  })

  it('refuses an agent the workspace does not have', async () => {
    await expect(exportHtml(p.home, 'demo', 'ghost')).rejects.toThrow('no agent "ghost" in workspace "demo"')
  })
})
