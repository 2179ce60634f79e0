/**
 * The web view in the real browser (Debian's chromium through playwright-core), against a
 * workspace recorded through the real server and the fake upstream: every page renders on the
 * server (scripts off too), a live page grows by a step sent after it opened, Fork from here fires
 * two attempts whose answers fill the cohort page, a page of another origin can neither read the
 * view nor post its form, and the export opens from file:// with the same content and no network.
 */
import fs from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import type { Page } from 'playwright-core'
import { listRefs } from '../../../proxy/store/git/refs'
import { openRepo } from '../../../proxy/store/git'
import { exportHtml } from '../../../proxy/view/export'
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream'
import { startProxy, type Proxy } from '../../support/harness'
import { launchBrowser, signInUrl, type TestBrowser } from '../../support/browser'
import { KEY_ENV, keyedRows, mainStep, recordDemo, sendStep } from '../../support/view-demo'

const WS = 'demo'
let fake: FakeUpstream
let p: Proxy
let b: TestBrowser
let page: Page

beforeAll(async () => {
  process.env[KEY_ENV] = 'sk-view'
  fake = await startFakeUpstream()
  p = await startProxy({ fake, config: { providers: keyedRows(fake.anthropicBaseUrl) } })
  await recordDemo(p, WS)
  b = await launchBrowser()
  const ctx = await b.context()
  page = await ctx.newPage()
  page.setDefaultTimeout(30_000)
  await page.goto(signInUrl(p, '/ui/'))
}, 120_000)
afterAll(async () => {
  await b?.close()
  await p?.close()
  await fake?.close()
})

const agents = async (): Promise<string[]> =>
  (await listRefs(openRepo(p.repo(WS)), 'refs/heads/agents/'))
    .map((r) => r.ref.slice('refs/heads/agents/'.length))
    .sort()

describe('the pages', () => {
  it('render on the server with scripts off: the workspace, its agents tree, a held step and a miss', async () => {
    const ctx = await b.browser.newContext({ javaScriptEnabled: false })
    try {
      const plain = await ctx.newPage()
      await plain.goto(signInUrl(p, '/ui/'))
      expect(await plain.locator('#workspaces').innerText()).toContain(WS)
      await plain.goto(`${p.url}/ui/w/${WS}`)
      const tree = await plain.locator('#ws-tree tr').allInnerTexts()
      expect(tree.map((t) => t.split('\t')[0]?.replace(/\s/g, ''))).toEqual([
        'main',
        '└main.aux',
        '└main.sub-ab12',
      ])
      expect(tree[2]).toContain('subagent')
      await plain.goto(`${p.url}/ui/w/${WS}/a/main`)
      expect(await plain.locator('#s003').innerText()).toContain('held notes_search')
      expect(await plain.locator('#agent-steps tr').count()).toBe(6)
      await plain.goto(`${p.url}/ui/w/${WS}/a/main/s/003`)
      expect(await plain.locator('.why').innerText()).toContain(
        "the client dropped notes_search; the hold re-sent step 002's array",
      )
      await plain.goto(`${p.url}/ui/w/${WS}/a/main/s/005`)
      const why = await plain.locator('.why').innerText()
      expect(why).toContain('moved since 004: tools, system')
      expect(why).toContain('hold not applied (system-changed)')
      expect(await plain.locator('#system-diff .add').innerText()).toContain('thorough')
      expect(await plain.locator('#transcript').innerText()).toContain('Turn 5: look at src/file5.ts')
    } finally {
      await ctx.close()
    }
  })
})

describe('live pages', () => {
  it('show a step sent after the agent page opened, without a reload', async () => {
    await page.goto(`${p.url}/ui/w/${WS}/a/main`)
    await page.waitForSelector('body.live')
    expect(await page.locator('#s007').count()).toBe(0)
    await sendStep(p, WS, 'main', mainStep(7, ['Read', 'Write', 'Bash'], true))
    await page.waitForSelector('#s007')
    expect(await page.locator('#agent-steps tr').count()).toBe(7)
    expect(await page.locator('#agent-summary .card').first().innerText()).toContain('7')
  })
})

describe('Fork from here', () => {
  it('fires two attempts from the step page and the cohort page fills in with both answers', async () => {
    fake.enqueue({ text: 'Reviewer: the change is safe.', times: 1 })
    fake.enqueue({ text: 'Writer: I would rename it first.', times: 1 })
    const before = await agents()
    await page.goto(`${p.url}/ui/w/${WS}/a/main/s/004`)
    await page.check('input[name=role][value=reviewer]')
    await page.check('input[name=role][value=writer]')
    await page.fill('textarea[name=goal]', 'Review the change.')
    await Promise.all([page.waitForURL(/\/ui\/w\/demo\/cohort\/main@004/), page.click('button[type=submit]')])
    // Locators, not a function: the view's CSP refuses the string evaluation waitForFunction needs.
    await page.locator('#cohort-members .member div.answer').nth(1).waitFor()
    const answers = (await page.locator('#cohort-members .member').allInnerTexts()).join('\n')
    expect(answers).toContain('Reviewer: the change is safe.')
    expect(answers).toContain('Writer: I would rename it first.')
    expect((await agents()).length).toBe(before.length + 2)
    const ops = fs.readFileSync(path.join(p.home, 'ops.jsonl'), 'utf8').trim().split('\n').slice(-2)
    for (const row of ops)
      expect(JSON.parse(row)).toMatchObject({
        origin: 'http',
        exit: 0,
        argv: expect.arrayContaining(['dispatch', '--from']),
      })
  })
})

describe('another origin', () => {
  let evil: http.Server
  let evilUrl: string
  beforeAll(async () => {
    const target = `${p.url}/ui/w/${WS}/a/main/s/003`
    evil = http.createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' })
      res.end(`<!doctype html><body><p id="read">pending</p>
<form id="f" method="post" action="${target}/fork"><input name="form" value="forged"><input name="role" value="reviewer"><input name="goal" value="exfiltrate"></form>
<script>
fetch(${JSON.stringify(target)}, { credentials: 'include' }).then((r) => r.text()).then(
  (t) => { document.getElementById('read').textContent = 'read ' + t.length },
  (e) => { document.getElementById('read').textContent = 'blocked' })
</script></body>`)
    })
    await new Promise<void>((r) => evil.listen(0, '127.0.0.1', r))
    evilUrl = `http://127.0.0.1:${(evil.address() as AddressInfo).port}/`
  })
  afterAll(() => new Promise<void>((r) => evil.close(() => r())))

  it('cannot read a page though the browser is signed in, nor post the form', async () => {
    const before = await agents()
    const other = await page.context().newPage()
    try {
      await other.goto(evilUrl)
      await other.waitForFunction("document.getElementById('read').textContent !== 'pending'")
      expect(await other.locator('#read').innerText()).toBe('blocked')
      const [answer] = await Promise.all([
        other.waitForResponse((r) => r.url().endsWith('/fork')),
        other.evaluate("document.getElementById('f').submit()"),
      ])
      expect(answer.status()).toBe(403)
      expect(answer.headers()['x-holdfast-error']).toBe('VIEW_REFUSED')
      expect(await agents()).toEqual(before)
    } finally {
      await other.close()
    }
  })
})

describe('the export', () => {
  it('opens from file:// with the pages the server shows, fetching nothing, its content policy refusing nothing of its own', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'holdfast-export-'))
    const file = path.join(dir, 'demo.html')
    fs.writeFileSync(file, await exportHtml(p.home, WS))
    const ctx = await b.context()
    const asked: string[] = []
    ctx.on('request', (r) => asked.push(r.url()))
    try {
      await page.goto(`${p.url}/ui/w/${WS}/a/main`)
      const served = await page.locator('main').innerText()
      await page.goto(`${p.url}/ui/w/${WS}`)
      const servedTree = await page.locator('main').innerText()
      const offline = await ctx.newPage()
      const refused: string[] = []
      offline.on('console', (m) => {
        if (m.text().includes('Content Security Policy')) refused.push(m.text())
      })
      await offline.goto(`file://${file}`)
      expect(await offline.locator('section.page:visible main').innerText()).toBe(servedTree)
      await offline.click('#ws-tree a:text-is("main")')
      expect(offline.url()).toMatch(/#\/w\/demo\/a\/main$/)
      expect(await offline.locator('section.page:visible main').innerText()).toBe(served)
      await offline.click('#s003 a')
      expect(await offline.locator('section.page:visible .why').innerText()).toContain(
        'the client dropped notes_search',
      )
      expect(asked.every((u) => u.startsWith('file://'))).toBe(true)
      // Its own policy (a <meta>) lets its inline stylesheet and script run, and nothing is refused.
      expect(refused).toEqual([])
    } finally {
      await ctx.close()
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
