/**
 * proxy/record (index): the record's home. Rules: the send half (meta, then the exact bytes) is
 * written into the journal before the send and a journal that cannot take it refuses the step
 * (RECORD_WRITE_FAILED, nothing remembered); the previous record the hold reads is the kept copy,
 * else the journal's (not committed yet), else the agent's branch, with its send time, keying
 * headers and status; a branch record that is not a request, or a directory in its place, is a
 * RecordFault naming it; there is none before step 2.
 */
import fs from 'node:fs'
import path from 'node:path'
import { anthropic } from '../../../proxy/dialects'
import { RecordFault, type PreviousStep } from '../../../proxy/core/hold'
import { HoldfastError } from '../../../proxy/core/errors'
import { AgentState } from '../../../proxy/live/agents'
import { silentLogger } from '../../../proxy/process/log'
import { Records } from '../../../proxy/record'
import { readJournal } from '../../../proxy/record/journal/reader'
import { InlineCommitter } from '../../../proxy/record/commit/committer'
import type { Workspace } from '../../../proxy/store/workspace'
import { tempHome } from '../../support/harness'
import { commitDirectoryInPlace, commitFiles, readyWorkspace, requestBytes, sentMeta } from './steps.support'

let home: string
let ws: Workspace
const records: Records[] = []
const committer = new InlineCommitter()

beforeAll(async () => {
  home = tempHome()
  ws = await readyWorkspace(home, 'w')
})
afterAll(() => {
  for (const r of records) r.close()
  fs.rmSync(home, { recursive: true, force: true })
})

function newRecords(budget = 1 << 20): Records {
  const r = new Records(budget, false)
  records.push(r)
  return r
}
const agentNamed = (name: string): AgentState => new AgentState(ws, name, silentLogger(), committer)
const parsedOf = (b: Buffer) => JSON.parse(b.toString()) as PreviousStep['parsed']

describe('the send half', () => {
  it('writes the meta and the exact bytes in one journal frame and keeps the request as the next previous', async () => {
    const r = newRecords()
    const agent = agentNamed('send')
    const bytes = requestBytes('hello \u00e9')
    const meta = sentMeta('w', 'send', 1, {
      started_at: '2026-12-02T10:00:00.000Z',
      cache_keying_headers: { 'anthropic-beta': 'b1' },
    })
    const entry = r.writeSend(agent, 1, bytes, parsedOf(bytes), meta)
    const step = readJournal(agent.journalDir).steps.get(1)!
    expect(step.request.equals(bytes)).toBe(true)
    expect(step.meta).toEqual(meta)
    expect(step.sent).toBe(false)
    expect(entry.place.file).toBe(step.place.file)

    const previous = (await r.previous(agent, 2, anthropic)) as PreviousStep
    expect(previous.parsed).toEqual(parsedOf(bytes))
    expect(previous.sentAt).toBe(Date.parse('2026-12-02T10:00:00.000Z'))
    expect(previous.headers).toEqual({ 'anthropic-beta': 'b1' })
    expect(previous.status).toBeUndefined()
    r.answered(agent, 1, 429)
    expect(((await r.previous(agent, 2, anthropic)) as PreviousStep).status).toBe(429)
  })

  it('refuses the step with RECORD_WRITE_FAILED when the journal cannot take it, and remembers nothing', async () => {
    const r = newRecords()
    const agent = agentNamed('blocked')
    fs.mkdirSync(path.dirname(agent.journalDir), { recursive: true })
    fs.writeFileSync(agent.journalDir, 'a file where the journal directory goes')
    const bytes = requestBytes('x')
    let thrown: unknown
    try {
      r.writeSend(agent, 3, bytes, parsedOf(bytes), sentMeta('w', 'blocked', 3))
    } catch (err) {
      thrown = err
    }
    expect(thrown).toBeInstanceOf(HoldfastError)
    expect(thrown).toMatchObject({
      code: 'RECORD_WRITE_FAILED',
      message: 'the record of step 003 could not be written; nothing was sent',
    })
    expect(r.previousRecords.get(agent.key, 3)).toBeUndefined()
    expect(await r.previous(agent, 4, anthropic)).toBeUndefined()
  })
})

describe('the previous record', () => {
  it('has none before step 2, nor for a step that left no record', async () => {
    const r = newRecords()
    expect(await r.previous(agentNamed('none'), 1, anthropic)).toBeUndefined()
    expect(await r.previous(agentNamed('none'), 5, anthropic)).toBeUndefined()
  })

  it('reads the journal’s copy when no copy is kept (a budget too small to keep any)', async () => {
    const r = newRecords(0)
    const agent = agentNamed('journaled')
    const bytes = requestBytes('from the journal')
    r.writeSend(
      agent,
      1,
      bytes,
      parsedOf(bytes),
      sentMeta('w', 'journaled', 1, { started_at: '2026-12-02T11:00:00.000Z' }),
    )
    expect(r.previousRecords.get(agent.key, 1)).toBeUndefined()
    const previous = (await r.previous(agent, 2, anthropic)) as PreviousStep
    expect(previous.parsed.messages).toEqual([{ role: 'user', content: 'from the journal' }])
    expect(previous.sentAt).toBe(Date.parse('2026-12-02T11:00:00.000Z'))
  })

  it('reads the branch once the step is committed, with the send time, keying headers and status of its meta', async () => {
    const r = newRecords(0)
    const agent = agentNamed('branch')
    const bytes = requestBytes('committed')
    const meta = sentMeta('w', 'branch', 1, {
      started_at: '2026-12-02T12:00:00.000Z',
      cache_keying_headers: { 'anthropic-beta': 'b2' },
      status: 400,
    })
    r.writeSend(agent, 1, requestBytes('journal copy'), parsedOf(bytes), meta)
    await commitFiles(ws, 'branch', 1, { 'request.json': bytes, 'meta.json': JSON.stringify(meta) })
    r.committed(agent, 1)
    const previous = (await r.previous(agent, 2, anthropic)) as PreviousStep
    expect(previous.parsed.messages).toEqual([{ role: 'user', content: 'committed' }])
    expect(previous.path).toBe("step 001 of branch's request.json")
    expect(previous).toMatchObject({
      sentAt: Date.parse(meta.started_at),
      headers: { 'anthropic-beta': 'b2' },
      status: 400,
    })
  })

  it('answers a RecordFault naming the record when the committed request is not a request of the dialect', async () => {
    const r = newRecords()
    await commitFiles(ws, 'broken', 1, { 'request.json': '{"model": 5, "messages": []}' })
    const fault = await r.previous(agentNamed('broken'), 2, anthropic)
    expect(fault).toBeInstanceOf(RecordFault)
    expect((fault as RecordFault).path).toBe("step 001 of broken's request.json")
    expect((fault as RecordFault).problem).toContain('model must be a string')
  })

  it('answers a RecordFault, not "no record", when a directory stands where the request should be', async () => {
    const r = newRecords()
    commitDirectoryInPlace(ws, 'dir', 1, 'request.json')
    const fault = await r.previous(agentNamed('dir'), 2, anthropic)
    expect(fault).toBeInstanceOf(RecordFault)
    expect(fault).toMatchObject({
      path: "step 001 of dir's request.json",
      problem: 'it is a directory, not a file',
    })
  })
})
