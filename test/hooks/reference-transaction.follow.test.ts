/**
 * A good config commit pushed from a clone while the proxy runs: the ref moves, the hook's
 * `committed` event reaches `POST /_holdfast/events/refs` (the proxy logs it at debug), and the
 * next step of an agent routes `model: "reviewer"` with the new model, twice over, no restart.
 * The events endpoint itself: 204 for a well-formed event, 400 otherwise, 403 with an Origin.
 */
import fs from 'node:fs'
import { startProxy, type Proxy } from '../support/harness'
import { captureLog, cleanup, cloneWithProviders, editProviders, git, gitOk, tempDir, tipOf } from './helpers'

let p: Proxy
let capture: ReturnType<typeof captureLog>
const repo = () => `${p.home}/workspaces/hooks/repo.git`

beforeAll(async () => {
  capture = captureLog()
  p = await startProxy({ home: tempDir(), log: capture.log })
})
afterAll(async () => {
  await p.close()
  cleanup()
})

async function step(model: string): Promise<string> {
  p.fake.reset()
  const res = await fetch(`${p.url}/w/hooks/a/main/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ model, max_tokens: 16, messages: [{ role: 'user', content: 'review this' }] }),
  })
  expect(res.status).toBe(200)
  await res.arrayBuffer()
  expect(p.fake.received).toHaveLength(1)
  return (JSON.parse(p.fake.received[0]?.body.toString() ?? '{}') as { model: string }).model
}

const roleText = (model: string) => `roles:\n  reviewer: {provider: anthropic, model: ${model}}\n`
const hookEvents = () => capture.entries().filter((e) => e.msg === 'hook event: refs moved')

describe('a good config commit, pushed while the proxy runs', () => {
  it('moves the ref, notifies the proxy, and the next step follows it without a restart', async () => {
    expect(await step('claude-sonnet-4-5')).toBe('claude-sonnet-4-5') // creates the workspace
    const pid = JSON.parse(fs.readFileSync(`${p.home}/serve.json`, 'utf8')).pid as number
    const before = await tipOf(repo())

    const clone = await cloneWithProviders(repo(), roleText('claude-reviewer-1'))
    const first = await git(clone, ['push', '-q', 'origin', 'config/default'])
    expect(first).toMatchObject({ code: 0, stderr: '' }) // nothing printed on success
    const after = await tipOf(repo())
    expect(after).toBe(await gitOk(clone, ['rev-parse', 'HEAD']))
    expect(hookEvents()).toEqual([
      expect.objectContaining({
        level: 20,
        workspace: 'hooks',
        refs: [{ ref: 'refs/heads/config/default', old: before, new: after }],
      }),
    ])
    expect(await step('reviewer')).toBe('claude-reviewer-1')

    const next = await editProviders(clone, roleText('claude-reviewer-2'))
    expect(await git(clone, ['push', '-q', 'origin', 'config/default'])).toMatchObject({ code: 0 })
    expect(await tipOf(repo())).toBe(next)
    expect(hookEvents()).toHaveLength(2)
    expect(await step('reviewer')).toBe('claude-reviewer-2')
    expect(JSON.parse(fs.readFileSync(`${p.home}/serve.json`, 'utf8')).pid).toBe(pid)
  })
})

describe('POST /_holdfast/events/refs', () => {
  const post = (body: string, headers: Record<string, string> = {}) =>
    fetch(`${p.url}/_holdfast/events/refs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
    })

  it('answers 204 to an event, 400 to a malformed one, 403 to a request with an Origin', async () => {
    const ok = await post(JSON.stringify({ refs: [{ ref: 'refs/heads/config/x', old: 'a', new: 'b' }] }))
    expect(ok.status).toBe(204)
    expect(await ok.text()).toBe('')
    const bad = await post(JSON.stringify({ refs: [{ ref: 'refs/heads/config/x' }] }))
    expect(bad.status).toBe(400)
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe('BAD_REQUEST')
    const notJson = await post('{nope')
    expect(notJson.status).toBe(400)
    const web = await post('{"refs":[]}', { origin: 'https://example.com' })
    expect(web.status).toBe(403)
  })
})
