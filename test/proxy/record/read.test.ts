/**
 * proxy/record/read: reading recorded steps for the CLI, the hold and attempts, on a real
 * workspace repository and a real journal. Rules: a step is listed once, in numeric order, as
 * committed or pending; a committed step is read from its commit even while the journal still
 * holds it; a pending one is read from the journal (its request, its meta so far, its answer
 * named by the answer's content type); a request that is not a JSON object or a meta that is not
 * JSON is an error naming the step; a notch's step is read at the notch commit, whatever the
 * branch did since; what a step holds under a name is told apart (file, directory, nothing).
 */
import fs from 'node:fs'
import { Journal } from '../../../proxy/record/journal/writer'
import {
  committedKind,
  journalFiles,
  journalOf,
  listSteps,
  readCommittedFile,
  readNotchStep,
  readStepFile,
  readStepMeta,
  readStepRequest,
  readStepResponse,
} from '../../../proxy/record/read'
import type { Workspace } from '../../../proxy/store/workspace'
import { tempHome } from '../../support/harness'
import { commitDirectoryInPlace, commitFiles, readyWorkspace, requestBytes, sentMeta } from './steps.support'

const SSE = 'event: message_stop\ndata: {"type":"message_stop"}\n\n'
const JSON_ANSWER = '{"content":[],"stop_reason":"end_turn"}'

let home: string
let ws: Workspace
let journal: Journal
/** The commit that holds step 1 only (the notch of the notch tests). */
let first: string

beforeAll(async () => {
  home = tempHome()
  ws = await readyWorkspace(home, 'w')
  first = await commitFiles(ws, 'a', 1, {
    'request.json': requestBytes('one'),
    'meta.json': JSON.stringify(sentMeta('w', 'a', 1)),
    'response.json': JSON_ANSWER,
  })
  await commitFiles(ws, 'a', 2, {
    'request.json': requestBytes('two'),
    'meta.json': JSON.stringify(sentMeta('w', 'a', 2)),
    'response.sse': SSE,
  })
  journal = new Journal(false)
  const dir = ws.agentJournal('a')
  // Step 2 is committed, but its journal file is not removed yet (and says something else).
  journal.agent(dir).send(2, sentMeta('w', 'a', 2, { endpoint: '/journal' }), requestBytes('two, journaled'))
  // Step 3 is answered and whole; step 4 was sent and has no answer yet.
  const three = journal.agent(dir).send(3, sentMeta('w', 'a', 3), requestBytes('three'))
  three.sent()
  three.chunk(Buffer.from(JSON_ANSWER.slice(0, 9)))
  three.chunk(Buffer.from(JSON_ANSWER.slice(9)))
  three.head({
    status: 200,
    headers: { 'content-type': 'application/json; charset=utf-8' },
    ttfb_ms: 1,
    total_ms: 2,
    ended_at: '2026-12-02T00:00:03.000Z',
  })
  journal
    .agent(dir)
    .send(4, sentMeta('w', 'a', 4), requestBytes('four'))
    .sent()
})

afterAll(() => {
  journal.close()
  fs.rmSync(home, { recursive: true, force: true })
})

describe('listing steps', () => {
  it('lists committed and pending steps once each, in numeric order', async () => {
    expect(await listSteps(ws, 'a')).toEqual([
      { n: 1, committed: true, journal: false },
      { n: 2, committed: true, journal: false },
      { n: 3, committed: false, journal: true },
      { n: 4, committed: false, journal: true },
    ])
  })

  it('lists nothing for an agent with neither a branch nor a journal', async () => {
    expect(await listSteps(ws, 'nobody')).toEqual([])
    expect(await readCommittedFile(ws, 'nobody', 1, 'request.json')).toBeUndefined()
    expect(await committedKind(ws, 'nobody', 1, 'request.json')).toBeUndefined()
  })
})

describe('reading one step', () => {
  it('reads a committed step from its commit even while the journal still holds another copy', async () => {
    expect((await readStepFile(ws, 'a', 2, 'request.json'))?.toString()).toBe(requestBytes('two').toString())
    expect((await readStepMeta(ws, 'a', 2))?.endpoint).toBe('/v1/messages')
  })

  it('reads a pending step from the journal: its request, its meta so far, its answer', async () => {
    const req = await readStepRequest(ws, 'a', 3)
    expect(req?.bytes.toString()).toBe(requestBytes('three').toString())
    expect(req?.body.messages).toEqual([{ role: 'user', content: 'three' }])
    expect(await readStepMeta(ws, 'a', 3)).toEqual(sentMeta('w', 'a', 3))
    expect(await readStepResponse(ws, 'a', 3)).toEqual({
      file: 'response.json',
      bytes: Buffer.from(JSON_ANSWER),
    })
  })

  it('finds each step’s response under the name it was recorded with, and none for an unanswered step', async () => {
    expect(await readStepResponse(ws, 'a', 1)).toEqual({
      file: 'response.json',
      bytes: Buffer.from(JSON_ANSWER),
    })
    expect(await readStepResponse(ws, 'a', 2)).toEqual({ file: 'response.sse', bytes: Buffer.from(SSE) })
    expect(await readStepResponse(ws, 'a', 4)).toBeUndefined()
    expect(await readStepFile(ws, 'a', 9, 'request.json')).toBeUndefined()
    expect(await readStepRequest(ws, 'a', 9)).toBeUndefined()
    expect(await readStepMeta(ws, 'a', 9)).toBeUndefined()
  })

  it('refuses a request that is not a JSON object and a meta that is not JSON, naming the step', async () => {
    await commitFiles(ws, 'bad', 1, { 'request.json': '[1,2]', 'meta.json': '{"torn' })
    await expect(readStepRequest(ws, 'bad', 1)).rejects.toThrow(
      "step 001's request.json is not a JSON object",
    )
    await expect(readStepMeta(ws, 'bad', 1)).rejects.toThrow(
      /^the meta\.json of step 001 of bad is not JSON: /,
    )
  })
})

describe('what a committed step holds under a name', () => {
  it('tells a file from a directory in its place and from nothing', async () => {
    await commitFiles(ws, 'odd', 1, { 'request.json': requestBytes('x') })
    commitDirectoryInPlace(ws, 'odd', 2, 'request.json')
    expect(await committedKind(ws, 'odd', 1, 'request.json')).toBe('blob')
    expect(await committedKind(ws, 'odd', 2, 'request.json')).toBe('tree')
    expect(await committedKind(ws, 'odd', 1, 'meta.json')).toBeUndefined()
    expect(await readCommittedFile(ws, 'odd', 2, 'request.json')).toBeUndefined()
  })
})

describe('the journal as files', () => {
  it.each([
    ['text/event-stream', 'response.sse'],
    ['application/json', 'response.json'],
    ['text/html; charset=utf-8', 'response.txt'],
    [undefined, 'response.txt'],
  ])('names an answer of content type %s %s', (type, name) => {
    const step = journalOf(ws, 'a').get(3)!
    const head = { ...step.head!, headers: type === undefined ? {} : { 'content-type': type } }
    const files = journalFiles({ ...step, head })
    expect(Object.keys(files).sort()).toEqual(['meta.json', name, 'request.json'].sort())
    expect(files[name]?.toString()).toBe(JSON_ANSWER)
  })

  it('has no response file for a step without answer bytes', () => {
    expect(Object.keys(journalFiles(journalOf(ws, 'a').get(4)!)).sort()).toEqual([
      'meta.json',
      'request.json',
    ])
  })

  it('reads the journal once while its files keep their sizes, and again once a frame is added', () => {
    const once = journalOf(ws, 'a')
    expect(journalOf(ws, 'a')).toBe(once)
    const j = new Journal(false)
    try {
      const entry = j.agent(ws.agentJournal('late')).send(1, sentMeta('w', 'late', 1), requestBytes('l'))
      const before = journalOf(ws, 'late')
      expect(before.get(1)?.sent).toBe(false)
      expect(journalOf(ws, 'late')).toBe(before)
      entry.sent()
      const after = journalOf(ws, 'late')
      expect(after).not.toBe(before)
      expect(after.get(1)?.sent).toBe(true)
    } finally {
      j.close()
    }
  })
})

describe('the notch step', () => {
  it('reads a step at the notch commit even after the branch moved on', async () => {
    const notch = await readNotchStep(ws.repo, first, 'a', 1)
    expect(notch.request.toString()).toBe(requestBytes('one').toString())
    expect(notch.meta).toEqual(sentMeta('w', 'a', 1))
    expect(notch.response).toEqual({ file: 'response.json', bytes: Buffer.from(JSON_ANSWER) })
  })

  it('refuses a step the notch commit has no record of, naming the commit', async () => {
    await expect(readNotchStep(ws.repo, first, 'a', 2)).rejects.toThrow(
      `step 002 of a has no record at ${first.slice(0, 8)}`,
    )
  })
})
