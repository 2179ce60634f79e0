/**
 * record/layout: the names of a step's files, and `meta.json` as committed (indented, with a
 * final newline).
 */
import type { StepMeta } from '../../../generated/meta'
import { META_FILE, metaBytes, REQUEST_FILE, RESPONSE_FILES } from '../../../proxy/record/layout'

describe("a step's record", () => {
  it('is request.json, meta.json and one response file', () => {
    expect([REQUEST_FILE, META_FILE, ...RESPONSE_FILES]).toEqual([
      'request.json',
      'meta.json',
      'response.json',
      'response.sse',
      'response.txt',
    ])
  })

  it('writes meta.json as indented JSON with a final newline', () => {
    expect(metaBytes({ step: '001' } as unknown as StepMeta).toString()).toBe('{\n  "step": "001"\n}\n')
  })
})
