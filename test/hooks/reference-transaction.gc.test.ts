/**
 * `git gc` beside the hook: git 2.39's pack-refs replays loose refs through the reference-transaction
 * hook without moving them (`0 → tip` into packed-refs, then `tip → 0` per loose file). A config tip
 * that no longer validates (a row removed from holdfast.yaml after it was committed) must not make
 * gc fail, and the proxy (here a stand-in named by serve.json) must not hear of a deletion.
 */
import fs from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { cleanup, commitObject, git, gitOk, homeWithWorkspace, tempDir, tipOf } from './helpers'

afterAll(cleanup)

it('packs refs, a config tip that no longer validates included, and reports no phantom deletion', async () => {
  const { home, repo } = await homeWithWorkspace('demo')
  const events: { refs: { ref: string; old: string; new: string }[] }[] = []
  const proxy = http.createServer((req, res) => {
    let body = ''
    req.on('data', (d: Buffer) => (body += d.toString()))
    req.on('end', () => {
      events.push(JSON.parse(body) as (typeof events)[number])
      res.writeHead(204).end()
    })
  })
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r))
  const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`
  fs.writeFileSync(
    path.join(home, 'serve.json'),
    JSON.stringify({ url, pid: process.pid, home, started_at: '' }),
  )
  try {
    const stale = await commitObject(repo, {
      'providers.yaml': 'roles:\n  old: {provider: removed, model: m}\n',
    })
    // Made without the hook, as if the row `removed` had been dropped from holdfast.yaml since.
    const noHook = ['-c', 'core.hooksPath=/dev/null', 'update-ref']
    await gitOk(repo, [...noHook, 'refs/heads/config/stale', stale])
    await gitOk(repo, [...noHook, 'refs/heads/agents/a', stale])

    const trace = path.join(tempDir(), 'trace')
    const r = await git(repo, ['pack-refs', '--all', '--prune'], { env: { HOLDFAST_HOOK_TRACE: trace } })
    expect(r).toMatchObject({ code: 0, stderr: '' })
    expect(await tipOf(repo, 'config/stale')).toBe(stale)
    expect(fs.existsSync(path.join(repo, 'refs', 'heads', 'config', 'stale'))).toBe(false) // packed
    const seen = fs.existsSync(trace) ? fs.readFileSync(trace, 'utf8') : ''
    expect(seen).not.toContain('agents/') // node never starts for them
    const reported = events.flatMap((e) => e.refs)
    expect(reported.filter((u) => /^0+$/.test(u.new))).toEqual([])
    expect(reported.every((u) => u.ref.startsWith('refs/heads/config/'))).toBe(true)
  } finally {
    await new Promise((r) => proxy.close(r))
  }
})
