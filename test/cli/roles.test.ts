/** `holdfast config set-role|remove-role|show` and `holdfast roles`, spawned as a user runs them. */
import fs from 'node:fs'
import path from 'node:path'
import { cli, tempHome } from '../support/harness'

let home: string
beforeAll(() => {
  home = tempHome()
  fs.writeFileSync(
    path.join(home, 'holdfast.yaml'),
    'listen: {host: 127.0.0.1, port: 0}\ndefaults: {workspace: w, agent: main}\nproviders:\n  anthropic: {dialect: anthropic, base_url: http://127.0.0.1:9}\n',
  )
})
afterAll(() => fs.rmSync(home, { recursive: true, force: true }))

describe('editing roles from the command line', () => {
  it('declares a role, shows it, lists it at the followed config, and removes it', () => {
    const set = cli([
      'config',
      'set-role',
      'w',
      'reviewer',
      '--provider',
      'anthropic',
      '--model',
      'claude-haiku-4-5',
      '--max-output-tokens',
      '900',
      '--create',
      '--home',
      home,
    ])
    expect(set.stderr).toBe('')
    expect(set.stdout).toMatch(
      /^config\/default at [0-9a-f]{8}: role reviewer → anthropic\/claude-haiku-4-5\n$/,
    )

    const show = cli(['config', 'show', 'w', '--home', home])
    expect(show.stdout).toContain(
      'reviewer:\n    provider: anthropic\n    model: claude-haiku-4-5\n    max_output_tokens: 900',
    )

    const roles = cli(['roles', '--ws', 'w', '--home', home, '--json'])
    const report = JSON.parse(roles.stdout)
    expect(report.heading).toMatch(/^follows config\/default at [0-9a-f]{8}$/)
    expect(report.roles).toEqual([
      {
        role: 'reviewer',
        provider: 'anthropic',
        model: 'claude-haiku-4-5',
        max_output_tokens: 900,
        row_declared: true,
      },
    ])

    const removed = cli(['config', 'remove-role', 'w', 'reviewer', '--home', home])
    expect(removed.code).toBe(0)
    expect(cli(['roles', '--ws', 'w', '--home', home]).stdout).toContain('no roles declared')
  })

  it('refuses a role naming an undeclared provider row, and commits nothing', () => {
    const before = cli(['config', 'show', 'w', '--home', home, '--json'])
    const r = cli(['config', 'set-role', 'w', 'x', '--provider', 'nowhere', '--model', 'm', '--home', home])
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(/roles\.x\.provider: "nowhere" is not a provider row in holdfast\.yaml/)
    expect(cli(['config', 'show', 'w', '--home', home, '--json']).stdout).toBe(before.stdout)
  })

  it('refuses to remove a role that is not declared, naming the declared ones', () => {
    const r = cli(['config', 'remove-role', 'w', 'nobody', '--home', home])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('declares no role "nobody"')
  })

  it('refuses --at a ref that does not exist, naming it', () => {
    const r = cli(['roles', '--ws', 'w', '--at', 'agents/ghost', '--home', home])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('agents/ghost')
  })
})
