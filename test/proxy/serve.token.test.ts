/**
 * serve and the home's token (DESIGN §4, fourth round): the first start without a configured
 * token makes `<home>/token` (0600), every later start uses it; a configured token (holdfast.yaml
 * or HOLDFAST_TOKEN) makes none and is the one required everywhere; binding off loopback still
 * needs a configured token (the file's is not enough); serve warns once at start when
 * holdfast.yaml or the token file is open to group or others; a disk that refuses the token file
 * does not stop serve (it keeps one in memory that no client knows, and says so).
 */
import fs from 'node:fs'
import path from 'node:path'
import { Writable } from 'node:stream'
import pino from 'pino'
import { silentLogger } from '../../proxy/process/log'
import { startServer } from '../../proxy/serve'
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream'
import { configFor, rawFetch, tempHome, writeConfig } from '../support/harness'

let fake: FakeUpstream
let home: string
const savedToken = process.env.HOLDFAST_TOKEN
beforeAll(async () => {
  fake = await startFakeUpstream()
  delete process.env.HOLDFAST_TOKEN
})
afterAll(async () => {
  await fake.close()
  if (savedToken !== undefined) process.env.HOLDFAST_TOKEN = savedToken
})
beforeEach(() => {
  home = tempHome()
})
afterEach(() => {
  delete process.env.HOLDFAST_TOKEN
  fs.rmSync(home, { recursive: true, force: true })
})

const tokenFile = () => path.join(home, 'token')
const health = (url: string, token?: string) =>
  rawFetch(`${url}/_holdfast/health`, { headers: token ? { 'x-holdfast-token': token } : {} }).then(
    (r) => r.status,
  )

/** A logger whose warnings (or errors) are kept. */
function warnings(level = 40): { log: pino.Logger; said: string[] } {
  const said: string[] = []
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      const line = JSON.parse(chunk.toString()) as { level: number; msg: string }
      if (line.level === level) said.push(line.msg)
      done()
    },
  })
  return { log: pino({ level: 'info' }, sink), said }
}

it('makes <home>/token (0600) at the first start, and every later start uses it', async () => {
  writeConfig(home, configFor(fake))
  const first = await startServer({ home, port: 0, log: silentLogger() })
  const token = fs.readFileSync(tokenFile(), 'utf8').trim()
  try {
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(fs.statSync(tokenFile()).mode & 0o777).toBe(0o600)
    expect([await health(first.url), await health(first.url, token)]).toEqual([401, 200])
  } finally {
    await first.close()
  }
  const again = await startServer({ home, port: 0, log: silentLogger() })
  try {
    expect(fs.readFileSync(tokenFile(), 'utf8').trim()).toBe(token)
    expect(await health(again.url, token)).toBe(200)
  } finally {
    await again.close()
  }
})

it('makes no token file when a token is configured, and requires the configured one', async () => {
  writeConfig(home, configFor(fake, { token: 'configured-token-0123456789' }))
  const s = await startServer({ home, port: 0, log: silentLogger() })
  try {
    expect(fs.existsSync(tokenFile())).toBe(false)
    expect([await health(s.url), await health(s.url, 'configured-token-0123456789')]).toEqual([401, 200])
  } finally {
    await s.close()
  }
  process.env.HOLDFAST_TOKEN = 'from-the-environment-42'
  const fromEnv = await startServer({ home, port: 0, log: silentLogger() })
  try {
    expect([
      await health(fromEnv.url, 'configured-token-0123456789'),
      await health(fromEnv.url, 'from-the-environment-42'),
    ]).toEqual([401, 200])
  } finally {
    await fromEnv.close()
  }
})

it("refuses to bind off loopback with only the home's token file: a public bind needs a configured token", async () => {
  writeConfig(home, configFor(fake))
  fs.writeFileSync(tokenFile(), 'a-token-in-the-file-0123456789\n', { mode: 0o600 })
  await expect(startServer({ home, host: '0.0.0.0', port: 0, log: silentLogger() })).rejects.toThrow(
    /binding 0\.0\.0\.0 \(off loopback\) requires a token: set token in holdfast.yaml or HOLDFAST_TOKEN/,
  )
})

;(process.platform === 'win32' ? it.skip : it)(
  'warns once at start when holdfast.yaml or the token file is open to others, naming the file and the fix',
  async () => {
    writeConfig(home, configFor(fake))
    const quiet = warnings()
    const first = await startServer({ home, port: 0, log: quiet.log })
    await first.close()
    expect(quiet.said).toEqual([])
    fs.chmodSync(path.join(home, 'holdfast.yaml'), 0o644)
    fs.chmodSync(tokenFile(), 0o660)
    const loud = warnings()
    const s = await startServer({ home, port: 0, log: loud.log })
    try {
      await health(s.url)
      expect(loud.said).toEqual([
        `${path.join(home, 'holdfast.yaml')} is open to group and others (mode 0644: they can read it); run: chmod 600 ${path.join(home, 'holdfast.yaml')}`,
        `${tokenFile()} is open to group (mode 0660: they can read and write it); run: chmod 600 ${tokenFile()}`,
      ])
    } finally {
      await s.close()
    }
  },
)

;(process.platform === 'win32' ? it.skip : it)(
  'warns at start when the home is open to group or others, saying to run chmod 700 on it, and leaves its mode alone',
  async () => {
    writeConfig(home, configFor(fake))
    fs.chmodSync(home, 0o755)
    const loud = warnings()
    const s = await startServer({ home, port: 0, log: loud.log })
    try {
      await health(s.url)
      expect(loud.said).toEqual([
        `${home} is open to group and others (mode 0755: they can list and enter it, and so read every record under it); run: chmod 700 ${home}`,
      ])
      expect(fs.statSync(home).mode & 0o777).toBe(0o755)
    } finally {
      await s.close()
    }
  },
)

it('starts when the disk refuses the token file, keeping a token no client knows, and says so', async () => {
  writeConfig(home, configFor(fake))
  // The disk refuses the token file (and only it: serve's other files are another matter).
  const open = fs.openSync
  const spy = jest.spyOn(fs, 'openSync').mockImplementation((file, ...rest) => {
    if (String(file).startsWith(tokenFile()))
      throw Object.assign(new Error('ENOSPC: no space left on device, open'), { code: 'ENOSPC' })
    return open(file, ...rest)
  })
  const errors = warnings(50)
  let s
  try {
    s = await startServer({ home, port: 0, log: errors.log })
  } finally {
    spy.mockRestore()
  }
  try {
    expect(fs.existsSync(tokenFile())).toBe(false)
    expect(errors.said).toEqual([
      expect.stringMatching(/^could not write .*token \(ENOSPC\): until a restart/),
    ])
    expect(await health(s.url)).toBe(401)
    const step = await rawFetch(`${s.url}/w/default/a/main/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({
        model: 'claude-fake-1',
        max_tokens: 8,
        messages: [{ role: 'user', content: 'hi' }],
      }),
    })
    expect(step.status).toBe(200) // the main job goes on: a row without api_key_env needs no token
  } finally {
    await s.close()
  }
})
