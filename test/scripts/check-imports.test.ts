/**
 * scripts/check-imports.js (`npm run check:imports`, .dependency-cruiser.cjs): the floors hold. A scratch tree gets one
 * import that runs back up each floor (core/ on the record, store/ on the record, record/ on the
 * live state, proxy/ on cli/, a git submodule reached behind store/git's face, the view on
 * store/git, a child started outside proxy/process/spawn) and depcruise, run with this repository's config, fails it naming every rule; the
 * same tree with only downward imports passes.
 */
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

const SCRIPT = path.join(__dirname, '..', '..', 'scripts', 'check-imports.js')

const roots: string[] = []
afterAll(() => {
  for (const r of roots) fs.rmSync(r, { recursive: true, force: true })
})

/** A scratch tree of `files` (path → source) with a tsconfig, checked as `npm run check:imports` checks. */
function cruise(files: Record<string, string>): { code: number | null; out: string } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'holdfast-check-imports-'))
  roots.push(root)
  const all = { ...files, 'tsconfig.json': JSON.stringify({ compilerOptions: { strict: true } }) }
  for (const [f, text] of Object.entries(all)) {
    fs.mkdirSync(path.dirname(path.join(root, f)), { recursive: true })
    fs.writeFileSync(path.join(root, f), text)
  }
  const r = spawnSync(process.execPath, [SCRIPT, '--root', root], { encoding: 'utf8', timeout: 60_000 })
  return { code: r.status, out: `${r.stdout}${r.stderr}` }
}

/** The floors as the product has them, every import running downward. */
const DOWNWARD: Record<string, string> = {
  'proxy/core/rule.ts': "import { named } from './name'\nexport const rule = named\n",
  'proxy/core/name.ts': 'export const named = 1\n',
  'proxy/store/git/refs.ts': "import { named } from '../../core/name'\nexport const ref = named\n",
  'proxy/store/git/index.ts': "export { ref } from './refs'\n",
  'proxy/store/workspace.ts': "import { ref } from './git'\nexport const ws = ref\n",
  'proxy/record/commit.ts':
    "import { ws } from '../store/workspace'\nimport { ref } from '../store/git'\nexport const commit = ws + ref\n",
  'proxy/live/agents.ts': "import { commit } from '../record/commit'\nexport const agents = commit\n",
  'proxy/report/steps.ts': "import { commit } from '../record/commit'\nexport const steps = commit\n",
  'proxy/view/page.ts': "import { steps } from '../report/steps'\nexport const page = steps\n",
  'proxy/server.ts':
    "import { agents } from './live/agents'\nimport { page } from './view/page'\nexport const server = agents + page\n",
  'cli/main.ts': "import { server } from '../proxy/server'\nexport const main = server\n",
}

describe('the floors', () => {
  it('pass a tree whose imports all run downward', () => {
    const r = cruise(DOWNWARD)
    expect(r.out).toContain('no dependency violations found')
    expect(r.code).toBe(0)
  })

  it('fail every import that runs back up, each by its rule', () => {
    const r = cruise({
      ...DOWNWARD,
      'proxy/core/rule.ts': "import { commit } from '../record/commit'\nexport const rule = commit\n",
      'proxy/store/workspace.ts':
        "import { ref } from './git'\nimport type { commit } from '../record/commit'\nexport const ws: typeof commit = ref\n",
      'proxy/record/commit.ts':
        "import type { agents } from '../live/agents'\nimport { ref } from '../store/git/refs'\nexport const commit: typeof agents = ref\n",
      'proxy/server.ts': "import { main } from '../cli/main'\nexport const server = main\n",
      'proxy/view/page.ts': "import { ref } from '../store/git'\nexport const page = ref\n",
      'proxy/store/lock.ts':
        "import { spawnSync } from 'node:child_process'\nexport const lock = spawnSync\n",
    })
    expect(r.code).not.toBe(0)
    for (const edge of [
      'error core-floor: proxy/core/rule.ts → proxy/record/commit.ts',
      'error store-floor: proxy/store/workspace.ts → proxy/record/commit.ts',
      'error record-floor: proxy/record/commit.ts → proxy/live/agents.ts',
      'error proxy-below-cli-and-hooks: proxy/server.ts → cli/main.ts',
      'error git-through-its-face: proxy/record/commit.ts → proxy/store/git/refs.ts',
      'error view-reads-through-report: proxy/view/page.ts → proxy/store/git/index.ts',
      'error one-way-to-spawn: proxy/store/lock.ts → child_process',
    ])
      expect(r.out).toContain(edge)
  })
})
