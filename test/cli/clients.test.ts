/**
 * `holdfast clients …` and `holdfast types` without a running server: the command registers the
 * clients from holdfast.yaml, connects to the hosts itself and kills them before it exits; a
 * refusal is one line on stderr and writes nothing. Run in this process (the spawned CLI is
 * exercised end to end in e2e.test.ts).
 */
import fs from 'node:fs'
import path from 'node:path'
import { buildProgram } from '../../cli/program'
import * as say from '../../proxy/core/tool-sentences'
import { readLoadedSet } from '../../proxy/store/loaded-sets'
import { cliAsync } from '../support/repo-checks'
import { cliInProcess, configWith, stdioClient, tempDir } from '../proxy/tools/support'
import { writeConfig } from '../support/harness'

let home: string
beforeAll(() => {
  home = tempDir()
  writeConfig(home, configWith({ fx: { ...stdioClient(), workspaces: ['default'] } }))
})
afterAll(() => fs.rmSync(home, { recursive: true, force: true }))

type Run = Awaited<ReturnType<typeof cliInProcess>>
const run = (...args: string[]): Promise<Run> => cliInProcess([...args, '--home', home])
function ok(r: { code: number | null; stdout: string; stderr: string }): string {
  expect(r.stderr).toBe('')
  expect(r.code).toBe(0)
  return r.stdout
}
function refusal(r: Run): string {
  expect([r.code, r.stdout]).toEqual([1, ''])
  const lines = r.stderr.trimEnd().split('\n')
  expect(lines).toHaveLength(1)
  return lines[0]!
}

describe('holdfast clients without a server', () => {
  it('connects to the hosts itself to list and load, refuses a whole load in one line, writes types, unloads', async () => {
    const list = await run('clients', 'list')
    const loaded = await run('clients', 'load', 'default', 'main', 'fx', 'echo')
    expect(ok(list)).toMatch(/^fx: stdio, connected, 11 tools, observed at \S+, workspaces: default\n$/)
    expect(fs.existsSync(path.join(home, 'clients', 'fx', 'workspaces', 'default'))).toBe(true)
    expect(ok(loaded)).toMatch(/^loaded fx_echo into default\/main from client "fx"\. A harness/)

    const out = tempDir()
    try {
      const refused = await run('clients', 'load', 'default', 'other', 'fx', 'echo', 'nope')
      // Spawned: json-schema-to-typescript loads prettier, which needs real dynamic import().
      const types = await cliAsync(['types', 'default', 'main', '--out', out, '--home', home])
      expect(refusal(refused)).toBe(
        `holdfast: ${say.loadRefused('default', 'other', say.notAdvertised('fx', 'nope'))}`,
      )
      expect(fs.existsSync(path.join(home, 'loaded', 'default', 'other.json'))).toBe(false)
      expect(ok(types)).toBe(`wrote ${path.join(out, 'default.main.tools.d.ts')}\n`)
      expect(fs.readFileSync(path.join(out, 'default.main.tools.d.ts'), 'utf8')).toContain(
        '/**\n * Echo the text back.\n */\nexport interface FxEchoInput {\n  text: string\n}',
      )
    } finally {
      fs.rmSync(out, { recursive: true, force: true })
    }
    expect(ok(await run('clients', 'unload', 'default', 'main', 'fx'))).toMatch(
      /^unloaded fx_echo from default\/main/,
    )
    expect(readLoadedSet(home, 'default', 'main')).toEqual([])
  })

  it('has --help on every clients command and on types', () => {
    const program = buildProgram()
    const clients = program.commands.find((c) => c.name() === 'clients')
    const names = clients?.commands.map((c) => c.name())
    expect(names).toEqual(['list', 'get', 'load', 'unload', 'loaded'])
    for (const c of [...(clients?.commands ?? []), program.commands.find((c) => c.name() === 'types')]) {
      expect(c?.helpInformation()).toMatch(/^Usage: holdfast .*\n[\s\S]*--home <dir>/)
    }
  })
})
