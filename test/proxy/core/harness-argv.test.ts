/**
 * The argv `holdfast run` composes per harness (proxy/core/harness-argv): Claude Code gets the
 * agent's MCP endpoint (with the token as a header), Codex its own base-URL config flag, a harness
 * holdfast cannot route a warning, anything else its argv unchanged.
 */
import { commandName, harnessArgv, statusLineSettings } from '../../../proxy/core/harness-argv'

const base = 'http://127.0.0.1:8787/w/proj/a/main'

describe('harnessArgv', () => {
  it('connects Claude Code to the MCP endpoint of its address, with the token when there is one', () => {
    expect(harnessArgv(['claude', '-p', 'hi'], { base, token: undefined, mcp: true })).toEqual({
      argv: [
        'claude',
        '--mcp-config',
        JSON.stringify({ mcpServers: { holdfast: { type: 'http', url: `${base}/mcp` } } }),
        '-p',
        'hi',
      ],
      harness: 'claude',
    })
    expect(harnessArgv(['/usr/local/bin/claude'], { base, token: 'tok', mcp: true }).argv[2]).toBe(
      JSON.stringify({
        mcpServers: {
          holdfast: { type: 'http', url: `${base}/mcp`, headers: { 'x-holdfast-token': 'tok' } },
        },
      }),
    )
    expect(harnessArgv(['claude', '-p', 'hi'], { base, token: 'tok', mcp: false }).argv).toEqual([
      'claude',
      '-p',
      'hi',
    ])
  })

  it('makes holdfast statusline Claude Code’s status line through its --settings flag, for this session only', () => {
    const statusline = ['/usr/bin/node', '/opt/hold fast/cli/entry.js', 'statusline', '--home', '/h']
    const plan = harnessArgv(['claude', '-p', 'hi'], { base, token: undefined, mcp: false, statusline })
    expect(plan.argv).toEqual(['claude', '--settings', statusLineSettings(statusline), '-p', 'hi'])
    expect(JSON.parse(plan.argv[2] as string)).toEqual({
      statusLine: {
        type: 'command',
        command: "/usr/bin/node '/opt/hold fast/cli/entry.js' statusline --home /h",
        padding: 0,
      },
    })
    // With the MCP endpoint: both flags, before the user's own arguments.
    expect(
      harnessArgv(['claude'], { base, token: undefined, mcp: true, statusline }).argv.filter((a) =>
        a.startsWith('--'),
      ),
    ).toEqual(['--mcp-config', '--settings'])
  })

  it('adds no status line when not asked, nor a second --settings when the user passed one', () => {
    expect(harnessArgv(['claude', '-p', 'hi'], { base, token: undefined, mcp: false })).toEqual({
      argv: ['claude', '-p', 'hi'],
      harness: 'claude',
    })
    const own = ['claude', '--settings', '/my/settings.json']
    expect(harnessArgv(own, { base, token: undefined, mcp: false, statusline: ['hf'] }).argv).toEqual(own)
  })

  it('routes Codex by its own config flag, before its subcommand, and leaves its provider as it is', () => {
    expect(harnessArgv(['codex', 'exec', 'hi'], { base, token: 'tok', mcp: true })).toEqual({
      argv: ['codex', '-c', `openai_base_url="${base}/v1"`, 'exec', 'hi'],
      harness: 'codex',
    })
  })

  it('warns for a harness it cannot route and runs it as given; anything else runs as given, silently', () => {
    const gemini = harnessArgv(['gemini', '-p', 'hi'], { base, token: undefined, mcp: true })
    expect(gemini.argv).toEqual(['gemini', '-p', 'hi'])
    expect(gemini.warning).toMatch(
      /^holdfast cannot route gemini: .*; it runs as given and nothing it sends is recorded$/,
    )
    expect(harnessArgv(['node', 'agent.js'], { base, token: undefined, mcp: true })).toEqual({
      argv: ['node', 'agent.js'],
      harness: undefined,
    })
  })

  it('knows a command by the name it would have on PATH', () => {
    expect(commandName('/opt/bin/codex.js')).toBe('codex')
    expect(commandName('C:\\bin\\claude.exe'.split('\\').join('/'))).toBe('claude')
  })
})
