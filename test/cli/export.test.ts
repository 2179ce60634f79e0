/** `holdfast export`: writes the view of a workspace as one HTML file (whole, or not at all) and says where; an unknown workspace is refused in one line. */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { startProxy, type Proxy } from '../support/harness'
import { mainStep, sendStep } from '../support/view-demo'
import { runCli } from './inprocess.support'

let p: Proxy
let dir: string
beforeAll(async () => {
  p = await startProxy()
  await sendStep(p, 'w', 'main', mainStep(1, ['Read']))
  await p.settled()
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'holdfast-export-cli-'))
})
afterAll(async () => {
  await p.close()
  fs.rmSync(dir, { recursive: true, force: true })
})

describe('holdfast export', () => {
  it('writes one self-contained HTML file and says where', async () => {
    const out = path.join(dir, 'w.html')
    const r = await runCli(['export', 'w', '-o', out, '--home', p.home])
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(new RegExp(`^wrote ${out} \\(\\d+ KB\\)\\n$`))
    const doc = fs.readFileSync(out, 'utf8')
    expect(doc).toMatch(/^<!doctype html>/)
    expect(doc).toContain('id="/w/w/a/main/s/001"')
    expect(fs.readdirSync(dir)).toEqual(['w.html'])
  })

  it('refuses a workspace that does not exist, writing nothing', async () => {
    const r = await runCli(['export', 'nowhere', '-o', path.join(dir, 'x.html'), '--home', p.home])
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(/^holdfast: no workspace "nowhere"/)
    expect(fs.existsSync(path.join(dir, 'x.html'))).toBe(false)
  })
})
