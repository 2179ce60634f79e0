/**
 * kill -9 in the middle of a Responses WebSocket answer: every event the client received was
 * journaled before it reached the client, so the next start commits the step (interrupted) with
 * each of those events in its answer, byte for byte, and numbering goes on after it.
 */
import fs from 'node:fs'
import path from 'node:path'
import { startFakeResponsesWs, type FakeResponsesWs } from '../../support/fake-responses-ws'
import { eventually, git, spawnServe, tempHome, writeConfig, type Spawned } from '../../support/harness'
import { message, openSocket, tool, turn, wsUrl } from '../../support/socket-client'

let fake: FakeResponsesWs
let home: string
let server: Spawned | undefined

beforeAll(async () => {
  fake = await startFakeResponsesWs()
  home = tempHome()
  writeConfig(home, {
    listen: { host: '127.0.0.1', port: 0 },
    defaults: { workspace: 'default', agent: 'main' },
    providers: {
      anthropic: { dialect: 'anthropic', base_url: 'http://127.0.0.1:9' },
      openai: { dialect: 'openai', base_url: fake.openaiBaseUrl },
    },
  })
})
afterAll(async () => {
  await server?.kill('SIGKILL')
  await fake.close()
  fs.rmSync(home, { recursive: true, force: true })
})

const repo = (): string => path.join(home, 'workspaces', 'default', 'repo.git')
const serve = (): Promise<Spawned> => spawnServe(['--home', home, '--port', '0'])

test('a kill -9 mid-answer loses no event the client received: the next start commits them all', async () => {
  server = await serve()
  const s = await openSocket(wsUrl(server.url, '/w/default/a/sock/v1/responses'))
  fake.enqueue({ text: 'one two three four five six seven eight nine ten', eventDelayMs: 150 })
  s.ws.send(
    JSON.stringify({
      type: 'response.create',
      model: 'gpt-fake-1',
      tools: [tool('exec_command')],
      input: [message('user', 'count to ten')],
    }),
    { binary: false },
  )
  await eventually(() => s.received.length >= 5, 10_000)
  await server.kill('SIGKILL')
  s.ws.terminate()
  const got = s.received.map((m) => m.data.toString())
  expect(got.length).toBeGreaterThanOrEqual(5)
  expect(got.some((e) => e.includes('"response.completed"'))).toBe(false)

  server = await serve()
  await eventually(() => {
    try {
      return git(repo(), 'ls-tree', '--name-only', 'agents/sock', 'steps/sock/001/').includes('meta.json')
    } catch {
      return false
    }
  }, 30_000)
  const files = git(repo(), 'ls-tree', '--name-only', 'agents/sock', 'steps/sock/001/').trim().split('\n')
  const answerFile = files.find((f) => /response\./.test(f)) as string
  expect(answerFile).toBeDefined()
  const recorded = git(repo(), 'show', `agents/sock:${answerFile}`)
  for (const e of got) expect(recorded).toContain(e)
  const meta = JSON.parse(git(repo(), 'show', 'agents/sock:steps/sock/001/meta.json')) as { outcome: string }
  expect(meta.outcome).toBe('interrupted')
  // Numbering goes on after the interrupted step, on a new socket.
  const again = await openSocket(wsUrl(server.url, '/w/default/a/sock/v1/responses'))
  const events = await turn(again, {
    type: 'response.create',
    model: 'gpt-fake-1',
    input: [message('user', 'again')],
  })
  again.ws.close()
  expect(events.at(-1)?.toString()).toContain('"response.completed"')
  await eventually(() => {
    try {
      return git(repo(), 'ls-tree', '--name-only', 'agents/sock', 'steps/sock/').includes('steps/sock/002')
    } catch {
      return false
    }
  }, 30_000)
}, 60_000)
