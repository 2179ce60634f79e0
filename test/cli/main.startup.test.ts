/**
 * The entry registers only the command it runs: the listing `--help` prints from the table is
 * the listing of the full program, and a run of `--help` or `env` loads no proxy, git, YAML or
 * schema module.
 */
import { spawnSync } from 'node:child_process'
import { CommanderError } from 'commander'
import { commandOf, COMMANDS, programFor } from '../../cli/main'
import { buildProgram } from '../../cli/program'
import { REGISTER, ROOT } from '../support/harness'

/** The top-level help text of a program, captured. */
async function topHelp(program: ReturnType<typeof buildProgram>): Promise<string> {
  let out = ''
  program.configureOutput({ writeOut: (s) => (out += s), writeErr: (s) => (out += s) })
  try {
    await program.parseAsync(['node', 'holdfast', '--help'])
  } catch (err) {
    if (!(err instanceof CommanderError)) throw err
  }
  return out
}

describe('the lazy command line', () => {
  it('lists every command with the term and description of its real registration', async () => {
    const full = buildProgram()
    const table = COMMANDS.map((c) => c.name)
    expect(full.commands.map((c) => c.name()).filter((n) => n !== 'hook')).toEqual(table)
    const help = full.createHelp()
    for (const c of COMMANDS) {
      const real = full.commands.find((x) => x.name() === c.name)
      expect(real && help.subcommandTerm(real)).toBe(c.term)
      expect(real?.description()).toBe(c.description)
    }
    expect(await topHelp(await programFor(['node', 'holdfast', '--help']))).toBe(await topHelp(full))
  })

  it('finds the command an argv runs, `help <command>` included', () => {
    expect(commandOf(['node', 'holdfast', 'steps', 'w', 'a'])).toBe('steps')
    expect(commandOf(['node', 'holdfast', 'help', 'why'])).toBe('why')
    expect(commandOf(['node', 'holdfast', 'hook', 'reference-transaction'])).toBe('hooks')
    expect(commandOf(['node', 'holdfast', '--help'])).toBeUndefined()
    expect(commandOf(['node', 'holdfast', 'frobnicate'])).toBeUndefined()
  })

  it('loads no proxy, git, YAML or schema module for --help or for env without a server', () => {
    const probe = `
      const { main } = require('./cli/main')
      process.stdout.write = () => true
      process.stderr.write = () => true
      main(['node', 'holdfast', ...JSON.parse(process.env.ARGS)]).then(() => {
        const loaded = Object.keys(require.cache).filter((f) =>
          /node_modules\\/(undici|yaml|ajv|isomorphic-git|simple-git|pino|@modelcontextprotocol)\\//.test(f) ||
          /\\/src\\/(proxy|store\\/(config|workspace|git)|tools|plugins)\\b/.test(f))
        require('node:fs').writeSync(3, JSON.stringify(loaded))
      })`
    for (const args of [['--help'], ['env', '--home', ROOT + '/no-such-home']]) {
      const r = spawnSync(process.execPath, ['-r', REGISTER, '-e', probe], {
        cwd: ROOT,
        env: { ...process.env, ARGS: JSON.stringify(args) },
        stdio: ['ignore', 'ignore', 'ignore', 'pipe'],
        timeout: 30_000,
      })
      expect(JSON.parse(String(r.output[3]))).toEqual([])
    }
  })
})
