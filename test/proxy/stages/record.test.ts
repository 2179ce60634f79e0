/**
 * proxy/stages/record, run in-process (accept → compose → hold → record) on a real home, journal
 * and workspace repository. Rules: step n's send half — the exact bytes to send and the meta's
 * send half (sanitized headers, the sent model, the hold verdict, who moved it) — is in the
 * journal when record returns; its commit is queued but lands only once the step is settled, and
 * an agent's commits land in step order whatever order they settle in; a record that cannot be
 * written refuses the step and takes no number (the next step gets it).
 */
import fs from 'node:fs'
import { HoldfastError } from '../../../proxy/core/errors'
import { anthropic } from '../../../proxy/dialects'
import type { Identified } from '../../../plugins/runner'
import type { CommitJob } from '../../../proxy/record'
import { readJournal } from '../../../proxy/record/journal/reader'
import { readCommittedFile } from '../../../proxy/record/read'
import { compose } from '../../../proxy/stages/compose'
import { hold } from '../../../proxy/stages/hold'
import { record, type Recorded } from '../../../proxy/stages/record'
import { git } from '../../support/harness'
import { accepted, routeTo, type StageRun, stageContext } from './stages.support'

const HEADERS = {
  'content-type': 'application/json',
  'anthropic-version': '2023-06-01',
  'anthropic-beta': 'prompt-caching-scope-2026-01-05',
  'x-api-key': 'sk-ant-secret',
  authorization: 'Bearer also-secret',
  'x-holdfast-role': 'coder',
  'user-agent': 'claude-cli/2.1.197 (external, sdk-cli)',
}
const body = (text: string) =>
  `{"model":"claude-sonnet-4-5","max_tokens":64,"messages":[{"role":"user","content":${JSON.stringify(text)}}]}`

let run: StageRun
/** Every step a test recorded: settled after it (a later settle does nothing), so the commits can drain. */
let recorded: Recorded[] = []
beforeEach(() => {
  run = stageContext()
  recorded = []
})
afterEach(async () => {
  for (const s of recorded) s.settle(jobOf(s))
  await run.close()
})

/** One step through accept, compose, hold and record, in the agent's critical section. */
function step(text: string, who: Identified = { workspace: 'w', agent: 'main' }): Promise<Recorded> {
  const { ctx } = run
  const request = accepted(anthropic, body(text), HEADERS)
  const route = routeTo('anthropic')
  const composed = compose(ctx, request, who, route)
  const agent = ctx.agent(who.workspace, who.agent)
  return agent.critical(async (n) => {
    const held = hold(ctx, request, composed, await ctx.records.previous(agent, n, request.dialect))
    const s = record(ctx, { request, who, route, held }, agent, n)
    recorded.push(s)
    return s
  })
}

const jobOf = (s: Recorded): CommitJob => ({
  agent: s.agent.name,
  n: s.n,
  model: s.meta.route.model,
  request: s.entry.place,
  finished: { meta: s.meta, response: null },
})

describe('the send half', () => {
  it('gets the composition’s own scan with a body the hold sent as composed, so the kept copy is not scanned again', async () => {
    const { ctx } = run
    const request = accepted(anthropic, body('scanned once'), HEADERS)
    const composed = compose(ctx, request, { workspace: 'w', agent: 'scan' }, routeTo('anthropic'))
    const agent = ctx.agent('w', 'scan')
    await agent.init()
    const held = hold(ctx, request, composed, await ctx.records.previous(agent, agent.next, anthropic))
    expect(held.bytes).toBe(request.raw)
    expect(held.top).toBe(request.top)
  })

  it('is in the journal when record returns: the exact bytes to send and the meta without secrets', async () => {
    const s = await step('hello')
    expect(s.n).toBe(1)
    const journaled = readJournal(s.agent.journalDir).steps.get(1)!
    expect(journaled.request.equals(s.held.bytes)).toBe(true)
    expect(journaled.request.toString()).toBe(body('hello'))
    expect(journaled.meta).toEqual(s.meta)
    expect(s.meta).toMatchObject({
      workspace: 'w',
      agent: 'main',
      step: '001',
      dialect: 'anthropic',
      endpoint: '/v1/messages',
      route: { provider: 'anthropic', url: 'http://127.0.0.1:9/v1/messages', model: 'claude-sonnet-4-5' },
      cache_keying_headers: { 'anthropic-beta': 'prompt-caching-scope-2026-01-05' },
      hold: { applied: false, reason: 'first-step' },
      request_bytes: Buffer.byteLength(body('hello')),
    })
    expect(s.meta.request_headers).toEqual({
      'content-type': 'application/json',
      'anthropic-version': '2023-06-01',
      'anthropic-beta': 'prompt-caching-scope-2026-01-05',
      'user-agent': 'claude-cli/2.1.197 (external, sdk-cli)',
    })
    expect(s.meta).not.toHaveProperty('identified')
    expect(JSON.stringify(journaled.meta)).not.toContain('secret')
  })

  it('records who a plugin moved the step from', async () => {
    const moved = { plugin: 'router', from_workspace: 'default', from_agent: 'main', why: 'session' }
    const s = await step('hi', { workspace: 'w', agent: 'sub', moved })
    expect(s.meta.identified).toEqual(moved)
    expect(s.meta.agent).toBe('sub')
  })

  it('makes the step the previous record the next step is held against', async () => {
    const first = await step('one')
    const second = await step('two')
    expect(second.n).toBe(2)
    expect(second.meta.hold.reason).not.toBe('first-step')
    const previous = await run.ctx.records.previous(first.agent, 2, anthropic)
    expect(previous && 'parsed' in previous && previous.parsed).toEqual(JSON.parse(body('one')))
  })
})

describe('the queued commit', () => {
  it('lands only once the step is settled, with the bytes and meta the journal holds', async () => {
    const s = await step('hello')
    const ws = s.agent.ws
    await new Promise((r) => setTimeout(r, 50))
    expect(await ws.committedSteps('main')).toBe(0)
    s.settle(jobOf(s))
    await run.ctx.drain()
    expect(await ws.committedSteps('main')).toBe(1)
    expect((await readCommittedFile(ws, 'main', 1, 'request.json'))?.toString()).toBe(body('hello'))
    expect(JSON.parse((await readCommittedFile(ws, 'main', 1, 'meta.json'))!.toString())).toEqual(s.meta)
  })

  it("lands an agent's commits in step order even when a later step settles first", async () => {
    const one = await step('one')
    const two = await step('two')
    two.settle(jobOf(two))
    await new Promise((r) => setTimeout(r, 50))
    expect(await one.agent.ws.committedSteps('main')).toBe(0)
    one.settle(jobOf(one))
    await run.ctx.drain()
    const log = git(one.agent.ws.repo.gitdir, 'log', '--format=%s', 'agents/main').trim().split('\n')
    expect(log).toEqual([
      'step 002: claude-sonnet-4-5 [main]',
      'step 001: claude-sonnet-4-5 [main]',
      'config: starter providers.yaml',
    ])
    const firstCommit = git(one.agent.ws.repo.gitdir, 'rev-parse', 'agents/main~1').trim()
    expect(git(one.agent.ws.repo.gitdir, 'ls-tree', '-r', '--name-only', firstCommit)).toContain(
      'steps/main/001/request.json',
    )
    expect(git(one.agent.ws.repo.gitdir, 'ls-tree', '-r', '--name-only', firstCommit)).not.toContain(
      'steps/main/002/',
    )
  })
})

describe('a record that cannot be written', () => {
  it('refuses the step with RECORD_WRITE_FAILED and leaves no gap in the numbering', async () => {
    const agent = run.ctx.agent('w', 'main')
    await agent.init()
    fs.writeFileSync(agent.journalDir, 'a file where the journal directory goes')
    await expect(step('lost')).rejects.toMatchObject({
      code: 'RECORD_WRITE_FAILED',
      message: 'the record of step 001 could not be written; nothing was sent',
    })
    await expect(step('lost')).rejects.toBeInstanceOf(HoldfastError)
    fs.rmSync(agent.journalDir)
    const s = await step('kept')
    expect(s.n).toBe(1)
  })
})
