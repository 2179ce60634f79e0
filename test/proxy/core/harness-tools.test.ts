/** A harness's own MCP names for loaded tools (core/harness-tools). */
import { harnessName, harnessPrefixes, withoutHarnessPrefix } from '../../../proxy/core/harness-tools'

describe('harness tool names', () => {
  it('counts mcp__holdfast__ always, and another server once its clients tool is declared', () => {
    expect(harnessPrefixes(['Read', 'mcp__fx__echo'])).toEqual(['mcp__holdfast__'])
    expect(harnessPrefixes(['mcp__hf__clients', 'mcp__holdfast__clients'])).toEqual([
      'mcp__holdfast__',
      'mcp__hf__',
    ])
  })

  it("finds the harness's name for a presented name only among the declared names", () => {
    const declared = new Set(['mcp__hf__clients', 'mcp__hf__fx_echo', 'mcp__other__fx_shout'])
    const prefixes = harnessPrefixes(declared)
    expect(harnessName('fx_echo', declared, prefixes)).toBe('mcp__hf__fx_echo')
    expect(harnessName('fx_shout', declared, prefixes)).toBeUndefined()
  })

  it('strips a harness prefix, and leaves any other name as it is', () => {
    expect(withoutHarnessPrefix('mcp__holdfast__fx_echo', ['mcp__holdfast__'])).toBe('fx_echo')
    expect(withoutHarnessPrefix('mcp__holdfast__', ['mcp__holdfast__'])).toBe('mcp__holdfast__')
    expect(withoutHarnessPrefix('fx_echo', ['mcp__holdfast__'])).toBe('fx_echo')
  })
})
