/**
 * record/commit/job: what one step's commit carries. Its finished half is the one given, else the
 * finish of how the forward went; a finish that throws still gives a record (the meta as the
 * forward knew it, the error named, the answer raw); a commit holds request.json from the journal,
 * the finished meta and the response as finished.
 */
import fs from 'node:fs'
import type { PreviousStep } from '../../../../proxy/core/hold'
import { AgentState } from '../../../../proxy/live/agents'
import { silentLogger } from '../../../../proxy/process/log'
import { Records } from '../../../../proxy/record'
import { finishedHalf, recordFiles } from '../../../../proxy/record/commit/job'
import { InlineCommitter } from '../../../../proxy/record/commit/committer'
import type { Workspace } from '../../../../proxy/store/workspace'
import { tempHome } from '../../../support/harness'
import { journalSteps } from '../commit.support'
import { readyWorkspace, requestBytes, sentMeta } from '../steps.support'

let home: string
let ws: Workspace
const records: Records[] = []
beforeAll(async () => {
  home = tempHome()
  ws = await readyWorkspace(home, 'w')
})
afterAll(() => {
  for (const r of records) r.close()
  fs.rmSync(home, { recursive: true, force: true })
})
function newRecords(): Records {
  const r = new Records(1 << 20, false)
  records.push(r)
  return r
}
const agentNamed = (name: string): AgentState =>
  new AgentState(ws, name, silentLogger(), new InlineCommitter())
const parsedOf = (b: Buffer) => JSON.parse(b.toString()) as PreviousStep['parsed']

describe("a commit's finished half", () => {
  it('is the one the job carries, else the finish of how the forward went', () => {
    const [s] = journalSteps(home, 'w', [{ agent: 'fin', n: 1 }])
    const given = { meta: sentMeta('w', 'fin', 1), response: null }
    expect(finishedHalf({ ...s!.commit, finished: given })).toBe(given)
    const made = finishedHalf(s!.commit)
    expect(made.meta).toMatchObject({ status: 200, outcome: 'ok', usage: { output_tokens: 1 } })
    expect(made.response?.file).toBe('response.json')
  })

  it('keeps a step whose finish throws: the meta as the forward knew it, INTERNAL named, the answer raw', () => {
    const [s] = journalSteps(home, 'w', [{ agent: 'fin2', n: 1 }])
    const f = finishedHalf({ ...s!.commit, finish: { ...s!.finish, dialect: 'nope' as 'anthropic' } })
    expect(f.meta).toMatchObject({ step: '001', status: 200, outcome: 'ok', response_file: 'response.txt' })
    expect(f.meta.error?.code).toBe('INTERNAL')
    expect(recordFiles(s!.commit, f)['response.txt']?.toString()).toBe(s!.answer)
  })
})

describe("a commit's files", () => {
  it('holds the request from the journal, the finished meta, and the answer read where the journal has it', () => {
    const r = newRecords()
    const agent = agentNamed('files')
    const bytes = requestBytes('req')
    const entry = r.writeSend(agent, 1, bytes, parsedOf(bytes), sentMeta('w', 'files', 1))
    entry.sent()
    entry.chunk(Buffer.from('data: {"a":'))
    entry.chunk(Buffer.from('1}\n\n'))
    const meta = { ...sentMeta('w', 'files', 1), status: 200 }
    const files = recordFiles(
      { agent: 'files', n: 1, model: null, request: entry.place },
      {
        meta,
        response: { file: 'response.sse', bytes: { file: entry.place.file, extents: entry.place.chunks } },
      },
    )
    expect(Object.keys(files).sort()).toEqual(['meta.json', 'request.json', 'response.sse'])
    expect(files['request.json']?.equals(bytes)).toBe(true)
    expect(JSON.parse(files['meta.json']!.toString())).toEqual(meta)
    expect(files['response.sse']?.toString()).toBe('data: {"a":1}\n\n')
  })

  it('holds decoded answer bytes as given, and no response file when there was no answer', () => {
    const r = newRecords()
    const agent = agentNamed('files2')
    const bytes = requestBytes('req')
    const entry = r.writeSend(agent, 1, bytes, parsedOf(bytes), sentMeta('w', 'files2', 1))
    const base = { agent: 'files2', n: 1, model: null, request: entry.place }
    const withAnswer = recordFiles(base, {
      meta: sentMeta('w', 'files2', 1),
      response: { file: 'response.json', bytes: { bytes: Buffer.from('{"ok":true}') } },
    })
    expect(withAnswer['response.json']?.toString()).toBe('{"ok":true}')
    const without = recordFiles(base, { meta: sentMeta('w', 'files2', 1), response: null })
    expect(Object.keys(without).sort()).toEqual(['meta.json', 'request.json'])
  })
})
