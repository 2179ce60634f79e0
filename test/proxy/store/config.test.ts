/**
 * store/config: `<home>/holdfast.yaml`. Covers: an empty or partial file gets every default, the
 * defaults written on first use parse to the documented settings (file mode 0600), an existing file
 * is never rewritten, each refusal is one sentence naming the file and the key, and the token
 * from `HOLDFAST_TOKEN` wins over the file's.
 */
import fs from 'node:fs'
import path from 'node:path'
import {
  ConfigError,
  configuredToken,
  DEFAULT_CONFIG_YAML,
  loadConfig,
  parseConfig,
} from '../../../proxy/store/config'
import * as config from '../../../proxy/store/config'
import { tempDir } from './git.support'

const F = '/h/holdfast.yaml'

/** The ConfigError `parseConfig(text)` throws (fails the test when it does not). */
function refusal(text: string): ConfigError {
  try {
    parseConfig(text, F)
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError)
    return err as ConfigError
  }
  throw new Error(`parseConfig accepted ${JSON.stringify(text)}`)
}

describe('parseConfig', () => {
  it('fills every default into an empty file and into a file that names only some keys', () => {
    for (const text of ['', '# nothing\n', '{}']) {
      const c = parseConfig(text, F)
      expect(c.listen).toEqual({ host: '127.0.0.1', port: 8787 })
      expect(c.defaults).toEqual({ workspace: 'default', agent: 'main' })
      expect(c.providers).toEqual({})
    }
    const c = parseConfig('listen: {port: 9000}\ndefaults: {agent: bob}\n', F)
    expect(c.listen).toEqual({ host: '127.0.0.1', port: 9000 })
    expect(c.defaults).toEqual({ workspace: 'default', agent: 'bob' })
  })

  it('refuses text that is not YAML, or not a mapping, naming the file', () => {
    expect(refusal('listen: [unclosed\n').message).toMatch(/^\/h\/holdfast\.yaml: not valid YAML: /)
    expect(refusal('- a\n- b\n').message).toMatch(/^\/h\/holdfast\.yaml: /)
  })

  it('refuses an unknown key (a typo) by name before what it made missing', () => {
    expect(refusal('listn: {port: 1}\ndefaults: {}\n').message).toBe(
      `${F}: unknown key "listn" at (top level)`,
    )
    expect(refusal('listen: {port: 70000}\n').message).toBe(`${F}: listen.port: must be <= 65535`)
  })

  it('refuses default workspace and agent names that are not usable names, naming the key', () => {
    expect(refusal('defaults: {workspace: "../x"}\n').message).toMatch(
      /^\/h\/holdfast\.yaml: defaults\.workspace: workspace name "\.\.\/x" is not usable/,
    )
    expect(refusal('defaults: {agent: "a b"}\n').message).toMatch(
      /^\/h\/holdfast\.yaml: defaults\.agent: agent name "a b" is not usable/,
    )
  })

  it('refuses a provider row name outside letters, digits, _ . -', () => {
    const text = 'providers:\n  "my row": {dialect: anthropic, base_url: "https://x"}\n'
    expect(refusal(text).message).toBe(`${F}: providers: row name "my row" must be letters, digits, _ . -`)
    const ok = parseConfig('providers:\n  my_row-1.x: {dialect: openai, base_url: "https://x/v1"}\n', F)
    expect(Object.keys(ok.providers)).toEqual(['my_row-1.x'])
  })
})

describe('loadConfig', () => {
  let home: string
  beforeEach(() => {
    home = path.join(tempDir('holdfast-config-'), 'nested', 'home')
  })
  afterEach(() => fs.rmSync(path.dirname(path.dirname(home)), { recursive: true, force: true }))

  it('writes the commented defaults (mode 0600) when the file is absent and says where', () => {
    const c = loadConfig(home)
    const file = path.join(home, 'holdfast.yaml')
    expect(config.wroteDefaultConfig).toBe(file)
    expect(fs.readFileSync(file, 'utf8')).toBe(DEFAULT_CONFIG_YAML)
    expect(fs.statSync(file).mode & 0o777).toBe(0o600)
    expect(c.listen).toEqual({ host: '127.0.0.1', port: 8787 })
    expect(c.providers.anthropic).toMatchObject({
      dialect: 'anthropic',
      base_url: 'https://api.anthropic.com',
    })
    expect(c.providers.openai).toMatchObject({ dialect: 'openai', base_url: 'https://api.openai.com/v1' })
    expect(c.token).toBeUndefined()
  })

  it('reads an existing file as it is and never rewrites it', () => {
    fs.mkdirSync(home, { recursive: true })
    const file = path.join(home, 'holdfast.yaml')
    fs.writeFileSync(file, 'listen: {port: 1234}\n')
    expect(loadConfig(home).listen.port).toBe(1234)
    expect(config.wroteDefaultConfig).toBeUndefined()
    expect(fs.readFileSync(file, 'utf8')).toBe('listen: {port: 1234}\n')
  })

  it('refuses a file it cannot read with a sentence naming it, and an invalid one without touching it', () => {
    fs.mkdirSync(path.join(home, 'holdfast.yaml'), { recursive: true }) // a directory in its place
    expect(() => loadConfig(home)).toThrow(ConfigError)
    expect(() => loadConfig(home)).toThrow(`${path.join(home, 'holdfast.yaml')}: cannot be read:`)
    fs.rmSync(home, { recursive: true })
    fs.mkdirSync(home, { recursive: true })
    fs.writeFileSync(path.join(home, 'holdfast.yaml'), 'token: short\n')
    expect(() => loadConfig(home)).toThrow(/token: must NOT have fewer than 16 characters/)
    expect(fs.readFileSync(path.join(home, 'holdfast.yaml'), 'utf8')).toBe('token: short\n')
  })
})

describe('configuredToken', () => {
  const saved = process.env.HOLDFAST_TOKEN
  afterEach(() => {
    if (saved === undefined) delete process.env.HOLDFAST_TOKEN
    else process.env.HOLDFAST_TOKEN = saved
  })

  it('takes HOLDFAST_TOKEN over the file, the file when the variable is empty, else none', () => {
    const withToken = parseConfig('token: "0123456789abcdef"\n', F)
    process.env.HOLDFAST_TOKEN = 'from-env'
    expect(configuredToken(withToken)).toBe('from-env')
    process.env.HOLDFAST_TOKEN = ''
    expect(configuredToken(withToken)).toBe('0123456789abcdef')
    delete process.env.HOLDFAST_TOKEN
    expect(configuredToken(parseConfig('', F))).toBeUndefined()
  })
})
