/**
 * The screenshots in docs/view.md, made from a workspace recorded through the real server and the
 * fake upstream (test/support/view-demo), in Debian's chromium: `npm run view:screenshots` rewrites
 * docs/view/*.png. Usage: node -r ./scripts/register.js bench/view-screenshots.ts [outDir]
 */
import path from 'node:path'
import { fireCohort } from '../hooks/attempts/fire'
import { startFakeUpstream } from '../test/support/fake-upstream'
import { startProxy } from '../test/support/harness'
import { launchBrowser, signInUrl } from '../test/support/browser'
import { KEY_ENV, keyedRows, recordDemo } from '../test/support/view-demo'

async function main(): Promise<void> {
  const out = path.resolve(process.argv[2] ?? path.join(__dirname, '..', 'docs', 'view'))
  process.env[KEY_ENV] = 'sk-demo'
  const fake = await startFakeUpstream()
  const p = await startProxy({ fake, config: { providers: keyedRows(fake.anthropicBaseUrl) } })
  const b = await launchBrowser()
  try {
    await recordDemo(p, 'demo')
    fake.enqueue({
      text: 'The change is safe: the function keeps its contract.\nOne edge case: an empty path.',
      times: 1,
    })
    fake.enqueue({ text: 'I would rename the helper and add a test for the empty path first.', times: 1 })
    await fireCohort(
      p.home,
      p.server.ctx.config,
      {
        ws: 'demo',
        from: 'main@004',
        goal: 'Review the last change.',
        roles: ['reviewer', 'writer'],
        skills: [],
      },
      'cli',
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
