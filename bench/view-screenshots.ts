/**
 * The screenshots in docs/view.md, made from a workspace recorded through the built `holdfast serve`
 * and the fake upstream (test/support/view-demo), its cohort fired by the built `holdfast attempt`,
 * in Debian's chromium: `npm run view:screenshots` builds and rewrites docs/view/*.png.
 * Usage: node -r ./scripts/register.js bench/view-screenshots.ts [outDir]
 */
import { execFile } from 'node:child_process'
import path from 'node:path'
import { promisify } from 'node:util'
import { startFakeUpstream } from '../test/support/fake-upstream'
import { launchBrowser, signInUrl } from '../test/support/browser'
import { KEY_ENV, keyedRows, recordDemo } from '../test/support/view-demo'
import { ROOT, serveHome } from './procs'

async function main(): Promise<void> {
  const out = path.resolve(process.argv[2] ?? path.join(__dirname, '..', 'docs', 'view'))
  process.env[KEY_ENV] = 'sk-demo'
  const fake = await startFakeUpstream()
  const p = await serveHome(fake, { providers: keyedRows(fake.anthropicBaseUrl) })
  const b = await launchBrowser()
  try {
    await recordDemo(p, 'demo')
    fake.enqueue({
      text: 'The change is safe: the function keeps its contract.\nOne edge case: an empty path.',
      times: 1,
    })
    fake.enqueue({ text: 'I would rename the helper and add a test for the empty path first.', times: 1 })
    // Not execFileSync: the fake upstream the attempts reach runs in this process.
    await promisify(execFile)(
      process.execPath,
      [
        path.join(ROOT, 'dist', 'cli', 'entry.js'),
        'attempt',
        'demo',
        '--from',
        'main@004',
        '--goal',
        'Review the last change.',
        '--role',
        'reviewer',
        '--role',
        'writer',
        '--home',
        p.home,
      ],
      { env: process.env },
    )
    await p.settled()
    const ctx = await b.context()
    const page = await ctx.newPage()
    await page.goto(signInUrl(p, '/ui/'))
    const shots: [string, string][] = [
      ['workspaces', '/ui/'],
      ['workspace', '/ui/w/demo'],
      ['agent', '/ui/w/demo/a/main'],
      ['step-held', '/ui/w/demo/a/main/s/003'],
      ['step-miss', '/ui/w/demo/a/main/s/005'],
      ['cohort', '/ui/w/demo/cohort/main@004'],
    ]
    for (const [name, url] of shots) {
      await page.goto(p.url + url)
      await page.screenshot({
        path: path.join(out, `${name}.png`),
        fullPage: name !== 'step-miss' && name !== 'step-held',
      })
      process.stdout.write(`${path.join(out, `${name}.png`)}\n`)
    }
  } finally {
    await b.close()
    await p.close()
    await fake.close()
  }
}

void main()
