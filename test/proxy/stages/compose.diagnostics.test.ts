/**
 * compose with a `diagnostics: add` row: a request that does not ask the provider to compare its
 * cache is made to, naming the agent's previous answer (or opting in with null at the agent's
 * first step), recorded as a change; a request that asks is left as the client sent it; a row
 * without the setting adds nothing. Then `why` has the provider's word on every step. The field
 * is no part of the cached prefix: reads and writes are the same with it and without it.
 */
import { why } from '../../../proxy/report/why'
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream'
import { git, startProxy, type Proxy } from '../../support/harness'
import { mainStep } from '../../support/view-demo'

let fake: FakeUpstream
let p: Proxy
beforeAll(async () => {
  fake = await startFakeUpstream()
  p = await startProxy({
    fake,
    config: {
      providers: { anthropic: { dialect: 'anthropic', base_url: fake.anthropicBaseUrl, diagnostics: 'add' } },
    },
  })
})
afterAll(async () => {
  await p.close()
  await fake.close()
})

const send = async (
  agent: string,
  body: Record<string, unknown>,
): Promise<{ id: string; usage: Record<string, number> }> => {
  const res = await fetch(`${p.url}/w/diag/a/${agent}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify(body),
  })
  expect(res.status).toBe(200)
  return (await res.json()) as { id: string; usage: Record<string, number> }
}
const sent = (): { diagnostics?: unknown } =>
  JSON.parse(fake.received.at(-1)!.body.toString()) as { diagnostics?: unknown }

test('a diagnostics: add row asks the provider to compare with the agent’s previous answer, so why has its word', async () => {
  const tools = ['Read', 'Write']
  const a1 = await send('main', mainStep(1, tools))
  expect(sent().diagnostics).toEqual({ previous_message_id: null })
  await p.settled()
  await send('main', mainStep(2, tools))
  expect(sent().diagnostics).toEqual({ previous_message_id: a1.id })
  await p.settled()
  await send('main', mainStep(3, tools, true)) // the system prompt edited
  await p.settled()
  const meta = JSON.parse(git(p.repo('diag'), 'show', 'agents/main:steps/main/002/meta.json')) as {
    changes: { field: string; why: string }[]
  }
  expect(meta.changes).toContainEqual({
    field: 'diagnostics',
    why: `provider row "anthropic" sets diagnostics: add (compared with ${a1.id})`,
  })
  expect((await why(p.home, 'diag', 'main', '002')).provider).toMatchObject({ said: 'no_miss' })
  expect((await why(p.home, 'diag', 'main', '003')).provider).toMatchObject({
    said: 'reason',
    reason: 'system_changed',
  })
})

test('a client that sends its next request the moment an answer ends is still compared with that answer', async () => {
  const tools = ['Read']
  const ids: string[] = []
  for (const i of [1, 2, 3, 4]) {
    const answer = await send('quick', mainStep(i, tools))
    if (i > 1) expect(sent().diagnostics).toEqual({ previous_message_id: ids.at(-1) })
    ids.push(answer.id)
  }
})

test('a request that asks already is sent as the client sent it', async () => {
  const body = { ...mainStep(1, ['Read']), diagnostics: { previous_message_id: 'msg_the_clients_own' } }
  await send('own', body)
  expect(fake.received.at(-1)!.body.toString()).toBe(JSON.stringify(body))
})

test('the added field is no part of the cached prefix: the same reads and writes with it and without it', async () => {
  fake.reset()
  const plain = await startProxy({ fake })
  try {
    const usage = async (url: string, agent: string) => {
      const out: Record<string, number>[] = []
      for (const i of [1, 2, 3]) {
        const res = await fetch(`${url}/w/cmp/a/${agent}/v1/messages`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
          body: JSON.stringify(mainStep(i, ['Read'])),
        })
        out.push(((await res.json()) as { usage: Record<string, number> }).usage)
      }
      return out
    }
    const without = await usage(plain.url, 'plain')
    fake.reset()
    const withIt = await usage(p.url, 'added')
    expect(withIt.map((u) => [u.cache_read_input_tokens, u.cache_creation_input_tokens])).toEqual(
      without.map((u) => [u.cache_read_input_tokens, u.cache_creation_input_tokens]),
    )
  } finally {
    await plain.close()
  }
})
