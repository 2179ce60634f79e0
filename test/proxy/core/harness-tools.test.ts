/** A harness's own MCP names for loaded tools (core/harness-tools). */
import {
  announcedTools,
  harnessName,
  harnessPrefixes,
  onHoldfastEndpoint,
  withoutHarnessPrefix,
} from '../../../proxy/core/harness-tools'

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

  it("tells a harness on holdfast's endpoint by any mcp__holdfast__ name or a clients tool of another server name", () => {
    expect(onHoldfastEndpoint(['Read', 'mcp__holdfast__fx_echo'])).toBe(true)
    expect(onHoldfastEndpoint(['mcp__hf__clients'])).toBe(true)
    expect(onHoldfastEndpoint(['Read', 'mcp__box__shout', 'holdfast_clients'])).toBe(false)
    expect(onHoldfastEndpoint([])).toBe(false)
  })

  it('reads the deferred tools announced one a line, and takes back those announced as no longer available', () => {
    const now =
      'The following deferred tools are now available via ToolSearch. Use ToolSearch:\nCronList\nmcp__box__shout\nmcp__holdfast__clients\n\nAvailable agent types:\n- claude'
    const gone =
      'The following deferred tools are no longer available. Do not search for them:\nmcp__box__shout\n\nThis is ambient context.'
    expect([...announcedTools([now])]).toEqual(['mcp__box__shout', 'mcp__holdfast__clients'])
    expect([...announcedTools([now, gone])]).toEqual(['mcp__holdfast__clients'])
    expect([
      ...announcedTools(['no tools here', 'a line mentioning mcp__holdfast__clients in prose']),
    ]).toEqual([])
  })
})
