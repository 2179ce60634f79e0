/**
 * proxy/core/tool-sentences: the sentences of loaded tools (refusals of a load, an unload or a
 * routed call; who can call a loaded tool). Rules: each sentence is exactly one wording, names
 * are JSON-quoted (a quote or backslash in a name cannot break the sentence), and the other
 * modules say the same thing by calling these (planLoad refuses an unadvertised tool with
 * `notAdvertised`).
 */
import { planLoad } from '../../../proxy/core/loaded-set'
import * as say from '../../../proxy/core/tool-sentences'

describe('the sentences, word for word', () => {
  it.each<[string, string, string]>([
    ['notAdvertised', say.notAdvertised('fs', 'read'), 'client "fs" advertises no tool "read" right now'],
    [
      'notLoaded',
      say.notLoaded('fs_read'),
      'no tool "fs_read" is loaded in this conversation, so a call to it is refused; load it again with the clients tool to use it',
    ],
    ['unknownClient', say.unknownClient('fs'), 'holdfast.yaml declares no client "fs"'],
    [
      'notRegistered',
      say.notRegistered('fs', 'proj'),
      'client "fs" is not registered in workspace "proj" (list "proj" under clients.fs.workspaces in holdfast.yaml and restart holdfast serve)',
    ],
    [
      'unreachable',
      say.unreachable('fs', 'spawn ENOENT'),
      'client "fs" cannot be reached right now: spawn ENOENT',
    ],
    [
      'timedOut',
      say.timedOut('fs', 'read', 30000),
      'client "fs" did not answer the call to "read" within 30000 ms',
    ],
    [
      'closedDuringCall',
      say.closedDuringCall('fs', 'read', 'exit code 1'),
      'client "fs" went away during the call to "read": exit code 1',
    ],
    [
      'callFailed',
      say.callFailed('fs', 'read', 'no such file'),
      'client "fs" refused the call to "read": no such file',
    ],
    ['notAnObject', say.notAnObject('fs_read'), 'the input to "fs_read" must be a JSON object'],
    [
      'nothingLoadedFrom',
      say.nothingLoadedFrom('fs', 'proj', 'main'),
      'nothing from client "fs" is loaded for proj/main',
    ],
    [
      'loadRefused',
      say.loadRefused('proj', 'main', 'client "fs" advertises no tool "x" right now'),
      'load into proj/main refused, nothing was written: client "fs" advertises no tool "x" right now',
    ],
    [
      'unloadRefused',
      say.unloadRefused('proj', 'main', 'no tool "fs_x" is loaded'),
      'unload from proj/main refused, nothing was written: no tool "fs_x" is loaded',
    ],
  ])('%s says it in one fixed wording', (_name, got, want) => {
    expect(got).toBe(want)
  })

  it('names the two ways a harness can run a loaded tool, and what happens otherwise', () => {
    expect(say.whoCanCall('proj', 'main')).toContain('/w/proj/a/main/mcp')
    expect(say.whoCanCall('proj', 'main')).toContain('POST /_holdfast/tools/call')
    expect(say.whoCanCall('proj', 'main')).toContain('"unknown tool"')
    expect(say.whoCanCall('proj', 'main')).not.toContain('<')
  })

  it('tells the model only the names it can call after a load, as its harness names them', () => {
    const claude = { callableAs: (n: string) => `mcp__holdfast__${n}`, deferred: true }
    expect(say.loadedForModel(['box_lookup'], claude)).toBe(
      'Loaded. Callable from your next turn: `box_lookup` as `mcp__holdfast__box_lookup`. If it is listed as deferred, fetch it with your tool search (ToolSearch) first.',
    )
    expect(say.loadedForModel(['a_x', 'a_y'], say.ROUTING_CALLER)).toBe(
      'Loaded. Callable from your next turn: `a_x`, `a_y`.',
    )
    expect(say.unloadedForModel(['box_lookup'], claude)).toBe(
      'Unloaded. No longer callable: `mcp__holdfast__box_lookup`.',
    )
  })
})

describe('names in the sentences', () => {
  it('JSON-quotes a name with a quote, a backslash or a newline, so the sentence stays one readable line', () => {
    const odd = 'a"b\\c\nd'
    expect(say.notAdvertised(odd, odd)).toBe(
      `client ${JSON.stringify(odd)} advertises no tool ${JSON.stringify(odd)} right now`,
    )
    expect(say.notAdvertised(odd, 'x')).toBe('client "a\\"b\\\\c\\nd" advertises no tool "x" right now')
    expect(say.notAnObject(odd)).not.toContain('\n')
  })

  it('leaves the free-text reason of a refusal as given (it is a sentence, not a name)', () => {
    expect(say.unreachable('fs', 'said "no"')).toBe('client "fs" cannot be reached right now: said "no"')
  })
})

describe('the same sentence wherever it is said', () => {
  it('is what planLoad refuses an unadvertised tool with', () => {
    const advertised = [{ name: 'read', description: 'Reads.', input_schema: { type: 'object' } }]
    expect(planLoad('fs', advertised, ['write'])).toEqual({
      ok: false,
      error: say.notAdvertised('fs', 'write'),
    })
  })
})
