/**
 * `holdfast statusline`: Claude Code's statusLine contract — JSON with the session id on stdin, one
 * line out, exit 0 always: the serve's line for a session it has seen, an empty line when no serve
 * runs or the input is not the contract's. Run as Claude Code runs it, through the entry.
 */
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import { statusLine } from '../../cli/statusline'
import { CLI, REGISTER, ROOT, startProxy, tempHome, type Proxy } from '../support/harness'
import { mainStep, sendStep } from '../support/view-demo'

let p: Proxy
beforeAll(async () => {
  p = await startProxy()
  await sendStep(p, 'cc', 'main', mainStep(1, ['Read']), { 'x-claude-code-session-id': 'sess-1' })
  await p.settled()
})
afterAll(() => p.close())

describe('holdfast statusline', () => {
  it('answers a session the serve has seen with its agent, cache share, savings and cost', async () => {
    expect(await statusLine(p.home, JSON.stringify({ session_id: 'sess-1', model: { id: 'x' } }))).toMatch(
      /^holdfast cc\/main · 1 step \(last 001\) · cache \d+% · hold saved \$[\d.]+ · \$[\d.]+$/,
    )
    expect(await statusLine(p.home, JSON.stringify({ session_id: 'unknown' }))).toBe('')
    expect(await statusLine(p.home, 'not json')).toBe('')
  })

  it('prints an empty line and exits 0 when no serve runs, through the entry', () => {
    const home = tempHome()
    try {
      const r = spawnSync(process.execPath, ['-r', REGISTER, CLI, 'statusline', '--home', home], {
        cwd: ROOT,
        input: JSON.stringify({ session_id: 'sess-1' }),
        encoding: 'utf8',
        timeout: 45_000,
      })
      expect([r.status, r.stdout, r.stderr]).toEqual([0, '\n', ''])
    } finally {
      fs.rmSync(home, { recursive: true, force: true })
    }
  })
})
