/**
 * core/layout: the names of a step's files, `meta.json` as committed (indented, with a final
 * newline), where a step is in git, and its commit message written and read back.
 */
import type { StepMeta } from '../../../generated/meta'
import {
  agentOfRef,
  agentRef,
  AGENTS_PREFIX,
  agentStepsPath,
  COMMIT_AUTHOR,
  configRef,
  responseFileFor,
  META_FILE,
  metaBytes,
  REQUEST_FILE,
  RESPONSE_FILES,
  stepOfSubject,
  stepSubject,
  stepTreePath,
} from '../../../proxy/core/layout'

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

describe("a step commit's message", () => {
  it('reads "step NNN: <model> [<agent>]" from the first line only', () => {
    expect(stepOfSubject('step 001: claude-x [main]\n')).toEqual({ agent: 'main', n: 1 })
    expect(stepOfSubject('step 1000: a [b] [c.d]\n\nbody')).toEqual({ agent: 'c.d', n: 1000 })
    expect(stepOfSubject('step 01: m [a]')).toBeUndefined()
    expect(stepOfSubject('step 0001: m [a]')).toBeUndefined()
    expect(stepOfSubject('config: add role x')).toBeUndefined()
    expect(stepOfSubject('note\nstep 001: m [a]')).toBeUndefined()
    expect(stepOfSubject('step 001: m []')).toBeUndefined()
  })
})

describe('where a step is in git', () => {
  it('is steps/<agent>/<NNN>, and its commit message names step, model and agent, read back the same', () => {
    expect(stepTreePath('main', 7)).toBe('steps/main/007')
    expect(stepSubject('main', 7, 'claude-x')).toBe('step 007: claude-x [main]\n')
    expect(stepSubject('a.b', 1000, null)).toBe('step 1000: unknown model [a.b]\n')
    expect(stepOfSubject(stepSubject('a.b', 1000, null))).toEqual({ agent: 'a.b', n: 1000 })
  })
})

describe("an agent's steps in git", () => {
  it('sit under steps/<agent>, three digits and more, never a step 0', () => {
    expect(agentStepsPath('main')).toBe('steps/main')
    expect(stepTreePath('main', 42)).toBe('steps/main/042')
    expect(stepTreePath('main', 1000)).toBe('steps/main/1000')
    expect(() => stepTreePath('main', 0)).toThrow(RangeError)
  })
})

describe("the answer's file", () => {
  it('is response.sse for an event stream, response.json for JSON, response.txt for anything else', () => {
    expect(responseFileFor('text/event-stream; charset=utf-8')).toBe('response.sse')
    expect(responseFileFor('Application/JSON')).toBe('response.json')
    expect(responseFileFor('application/problem+json')).toBe('response.json')
    expect(responseFileFor('text/plain')).toBe('response.txt')
    expect(responseFileFor('')).toBe('response.txt')
  })
})

describe('the ref namespace', () => {
  it('names agent branches refs/heads/agents/<agent> and lineages refs/heads/config/<name>', () => {
    expect(agentRef('main')).toBe('refs/heads/agents/main')
    expect(agentRef('main').startsWith(AGENTS_PREFIX)).toBe(true)
    expect(configRef('default')).toBe('refs/heads/config/default')
  })

  it('reads the agent back from its branch, and nothing from another ref', () => {
    expect(agentOfRef(agentRef('a.b-c'))).toBe('a.b-c')
    expect(agentOfRef(configRef('default'))).toBeUndefined()
    expect(agentOfRef('refs/heads/agentsx/main')).toBeUndefined()
  })

  it("signs holdfast's commits holdfast <holdfast@localhost>", () => {
    expect(COMMIT_AUTHOR).toEqual({ name: 'holdfast', email: 'holdfast@localhost' })
  })
})
