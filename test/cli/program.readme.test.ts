/**
 * README.md's first screen: the quick start is exactly two commands (one that runs the proxy, one
 * that runs the tests), and the lines after it answer a newcomer's first questions with what is
 * true of this checkout: the serve's port and home options, the `base_url` line of the default
 * rows, every install script npm skips and the engine warning, and how long `npm test` takes.
 */
import fs from 'node:fs'
import path from 'node:path'
import { DEFAULT_CONFIG_YAML } from '../../proxy/store/config'
import { buildProgram } from '../../cli/program'

const ROOT = path.join(__dirname, '..', '..')
const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8')
const quick = readme.slice(
  readme.indexOf('## Quick start'),
  readme.indexOf('\n## ', readme.indexOf('## Quick start') + 1),
)

test('the quick start is exactly two commands: one runs the proxy, one runs the tests', () => {
  const block = /```sh\n([\s\S]*?)```/.exec(quick)?.[1] ?? ''
  const commands = block
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => l.split('#')[0]!.trim())
  expect(commands).toEqual(['npm install && npm start', 'npm test'])
})

test('the first screen names the port and home options serve really has', () => {
  expect(quick).toContain('npm start -- --port 8788 --home /tmp/hf')
  expect(quick).toContain('HOLDFAST_HOME=')
  const serve = buildProgram().commands.find((c) => c.name() === 'serve')!
  const flags = serve.options.map((o) => o.long)
  expect(flags).toEqual(expect.arrayContaining(['--port', '--home']))
})

test('the first screen says where requests go in the words of the default rows', () => {
  for (const url of ['https://api.anthropic.com', 'https://api.openai.com/v1']) {
    expect(DEFAULT_CONFIG_YAML).toContain(`base_url: ${url}`)
    expect(quick).toContain(`\`${url}\``)
  }
  expect(quick).toContain('`base_url`')
})

test('the first screen explains every install script npm skips and the engine warning', () => {
  const lock = JSON.parse(fs.readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { hasInstallScript?: boolean; optional?: boolean }>
  }
  const scripted = Object.entries(lock.packages)
    .filter(([where, p]) => where !== '' && p.hasInstallScript)
    .map(([where]) => where.replace(/^.*node_modules\//, ''))
  expect(scripted.length).toBeGreaterThan(0)
  const words = (name: string): string =>
    name === 'claude-code-2-1-332' || name === '@anthropic-ai/claude-code' ? 'Claude Code' : name
  for (const name of scripted) expect(quick).toContain(words(name))
  expect(quick).toContain(`${new Set(scripted).size} install scripts`)
  expect(quick).toContain('EBADENGINE')
})

test('the first screen says how long npm test takes', () => {
  expect(quick).toMatch(/`npm test` takes about \d+ minutes/)
})
