/**
 * `why`'s one cause, end to end against a fake upstream that answers Anthropic's cache diagnostics
 * as documented: each step names the previous answer's id, as Claude Code does, and `why` (its
 * JSON and its text) gives the cause and quotes the provider's word verbatim with the tokens it
 * missed: a first step, no miss, a held drop the provider confirms, a system change, a tools
 * change, an id the provider no longer knows.
 */
import { why } from '../../../proxy/report/why'
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream'
import { startProxy, type Proxy } from '../../support/harness'
import { KEY_ENV, keyedRows, mainStep } from '../../support/view-demo'
import { cliInProcess } from '../tools/support'

let fake: FakeUpstream
let p: Proxy
const ALL = ['Read', 'Write', 'Bash', 'notes_search']
const LESS = ['Read', 'Write', 'Bash']

async function send(body: Record<string, unknown>, previous: string | null): Promise<string> {
  const res = await fetch(`${p.url}/w/diag/a/main/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ ...body, diagnostics: { previous_message_id: previous } }),
  })
  const answer = (await res.json()) as { id: string }
  expect(res.status).toBe(200)
  return answer.id
}

beforeAll(async () => {
  process.env[KEY_ENV] = 'sk-view'
  fake = await startFakeUpstream()
  p = await startProxy({ fake, config: { providers: keyedRows(fake.anthropicBaseUrl) } })
  const a1 = await send(mainStep(1, ALL), null)
  const a2 = await send(mainStep(2, ALL), a1)
  const a3 = await send(mainStep(3, LESS), a2) // drops notes_search: held
  const a4 = await send(mainStep(4, LESS, true), a3) // the system prompt edited
  await send(mainStep(5, [...LESS, 'Grep'], true), a4) // a tool added
  await send(mainStep(6, [...LESS, 'Grep'], true), 'msg_nobody_knows')
  await p.settled()
})
afterAll(async () => {
  await p.close()
  await fake.close()
})

const report = (n: string) => why(p.home, 'diag', 'main', n)

describe('the cause of each step, with the provider’s word', () => {
  it('is first_step, then no_miss when the provider found no divergence', async () => {
    expect((await report('001')).cause).toBe('first_step')
    const r = await report('002')
    expect(r).toMatchObject({ cause: 'no_miss', provider: { said: 'no_miss', reason: null } })
  })

  it('is held on a held drop, and the provider confirms the held prefix', async () => {
    const r = await report('003')
    expect(r.cause).toBe('held')
    expect(r.provider?.said).toBe('no_miss')
    expect(r.cause_lines).toContain('the provider confirmed the held prefix')
  })

  it('quotes the provider’s system_changed verbatim with its missed tokens', async () => {
    const r = await report('004')
    expect(r.cause).toBe('system_prompt_changed')
    expect(r.provider).toMatchObject({ said: 'reason', reason: 'system_changed' })
    expect(r.provider?.missed_input_tokens).toBeGreaterThan(0)
    const text = await cliInProcess(['why', 'diag', 'main', '004', '--home', p.home])
    expect(text.stdout).toContain('  cause: system_prompt_changed: the system prompt changed\n')
    expect(text.stdout).toContain(
      `  the provider said: system_changed, ${r.provider?.missed_input_tokens} input tokens missed\n`,
    )
    const json = JSON.parse(
      (await cliInProcess(['why', 'diag', 'main', '004', '--json', '--home', p.home])).stdout,
    )
    expect(json).toMatchObject({ cause: 'system_prompt_changed', provider: { reason: 'system_changed' } })
  })

  it('is tools_changed when the client added a tool', async () => {
    const r = await report('005')
    expect(r).toMatchObject({
      cause: 'tools_changed',
      provider: { reason: 'tools_changed' },
    })
    expect(r.cause_lines.some((l) => l.includes('instead'))).toBe(false)
  })

  it('falls back on holdfast’s diff when the request named another answer than the previous step’s (one the provider no longer knows), and quotes it', async () => {
    const r = await report('006')
    expect(r.provider).toMatchObject({
      said: 'other',
      other_said: 'reason',
      reason: 'previous_message_not_found',
      compared_with: 'msg_nobody_knows',
    })
    expect(r.cause_lines).toContain(
      `the provider compared with msg_nobody_knows, not the previous step's answer ${r.provider?.previous_answer}, and said: previous_message_not_found, ${r.provider?.missed_input_tokens} input tokens missed (quoted, not the cause)`,
    )
    expect(r.cause).not.toBe('unknown')
  })
})
