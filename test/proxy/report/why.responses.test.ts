/**
 * The provider's word on a Responses step, end to end: each request names the previous response in
 * `prompt_cache_options.comparison_response_id`, the fake answers `prompt_cache_diagnostics` as
 * the API documents it (on the JSON body and on a stream's final response), meta.json's
 * provider_cache keeps it verbatim (read on the commit side), and `why --json` gives the provider's
 * reason with its missed tokens and the cause: a hit, a tools change, an instructions change
 * (the API calls it input_changed), a streamed tools change, an unknown id.
 */
import { readStepMeta } from '../../../proxy/record/read'
import { why } from '../../../proxy/report/why'
import { startProxy, type Proxy } from '../../support/harness'
import { fn, outputOf, postResponses, user, type Item } from '../../support/responses'
import { cliInProcess } from '../tools/support'

let p: Proxy
const INSTRUCTIONS = 'You are a careful assistant. '.repeat(60)
const ids: string[] = []
const raw: Item[] = []

/** One turn of a stateless conversation, compared with `baseline`; its response's id and diagnostics. */
async function turn(
  input: Item[],
  tools: Item[],
  baseline: string | undefined,
  extra: Item = {},
): Promise<{ id: string; diagnostics: unknown; output: Item[] }> {
  const body = {
    model: 'gpt-5.6',
    instructions: INSTRUCTIONS,
    input,
    tools,
    store: false,
    ...(baseline ? { prompt_cache_options: { comparison_response_id: baseline } } : {}),
    ...extra,
  }
  const r = await postResponses(`${p.url}/w/resp/a/main`, body)
  expect(r.status).toBe(200)
  const text = r.bytes.toString()
  const response = (
    extra.stream
      ? JSON.parse(
          text
            .split('\n')
            .filter((l) => l.startsWith('data: ') && l.includes('"response.completed"'))[0]!
            .slice(6),
        ).response
      : JSON.parse(text)
  ) as { id: string; prompt_cache_diagnostics?: unknown }
  return { id: response.id, diagnostics: response.prompt_cache_diagnostics, output: outputOf(r.bytes) }
}

beforeAll(async () => {
  p = await startProxy()
  const tools = [fn('read'), fn('write')]
  let input: Item[] = [user('hello')]
  const step = async (t: Item[], extra: Item = {}, baseline = ids.at(-1)): Promise<void> => {
    const a = await turn(input, t, baseline, extra)
    ids.push(a.id)
    raw.push(a.diagnostics as Item)
    input = [...input, ...a.output, user(`and then ${ids.length}`)]
  }
  await step(tools) // 001: no baseline
  await step(tools) // 002: a hit
  await step([...tools, fn('grep')]) // 003: a tool added
  await step([...tools, fn('grep')], { instructions: `${INSTRUCTIONS}Be brief.` }) // 004: instructions edited
  await step([...tools, fn('grep'), fn('ls')], { stream: true }) // 005: streamed, a tool added
  await step([...tools, fn('grep'), fn('ls')], {}, 'resp_nobody_knows') // 006: an unknown id
  await p.settled()
})
afterAll(() => p.close())

const meta = (n: number) => readStepMeta(p.server.ctx.workspace('resp'), 'main', n)
const report = (n: string) => why(p.home, 'resp', 'main', n)

test('the fake answers the comparison as documented: a hit, a miss with its reason and tokens, an unknown id', () => {
  expect(raw[0]).toBeUndefined()
  expect(raw[1]).toEqual({ type: 'cache_hit' })
  expect(raw[2]).toMatchObject({ type: 'cache_miss', reason: 'tools_changed' })
  expect(raw[3]).toMatchObject({ type: 'cache_miss', reason: 'input_changed' })
  expect(raw[4]).toMatchObject({ type: 'cache_miss', reason: 'tools_changed' })
  expect(raw[5]).toEqual({ type: 'comparison_response_not_found' })
})

test('meta.json keeps the provider’s verdict verbatim, on a JSON answer and on a stream’s final response', async () => {
  expect((await meta(1))?.provider_cache).toMatchObject({ asked: false, said: 'nothing' })
  expect((await meta(2))?.provider_cache).toEqual({
    asked: true,
    compared_with: ids[0],
    said: 'no_miss',
    reason: null,
    missed_input_tokens: null,
    raw: { type: 'cache_hit' },
  })
  const streamed = (await meta(5))?.provider_cache
  expect(streamed).toMatchObject({
    asked: true,
    compared_with: ids[3],
    said: 'reason',
    reason: 'tools_changed',
    raw: raw[4],
  })
  expect(streamed?.missed_input_tokens).toBe((raw[4] as { cache_missed_tokens: number }).cache_missed_tokens)
})

test('why --json gives the provider’s reason with its missed tokens, and the cause', async () => {
  expect(await report('002')).toMatchObject({ cause: 'no_miss', provider: { said: 'no_miss' } })
  const tools = JSON.parse(
    (await cliInProcess(['why', 'resp', 'main', '003', '--json', '--home', p.home])).stdout,
  ) as { cause: string; provider: { said: string; reason: string; missed_input_tokens: number } }
  expect(tools).toMatchObject({
    cause: 'tools_changed',
    provider: { said: 'reason', reason: 'tools_changed' },
  })
  expect(tools.provider.missed_input_tokens).toBe(
    (raw[2] as { cache_missed_tokens: number }).cache_missed_tokens,
  )
  const text = (await cliInProcess(['why', 'resp', 'main', '003', '--home', p.home])).stdout
  expect(text).toContain(
    `  the provider said: tools_changed, ${tools.provider.missed_input_tokens} input tokens missed\n`,
  )
  expect(await report('005')).toMatchObject({ cause: 'tools_changed', provider: { reason: 'tools_changed' } })
})

test('an instructions change is system_prompt_changed: the provider’s input_changed covers instructions, so they agree', async () => {
  const r = await report('004')
  expect(r).toMatchObject({
    cause: 'system_prompt_changed',
    disagree: false,
    provider: { reason: 'input_changed' },
  })
  expect(r.cause_lines).toContain(
    `the provider said: input_changed, ${r.provider?.missed_input_tokens} input tokens missed`,
  )
})

test('a comparison with an id the provider does not know is quoted, and holdfast’s diff gives the cause', async () => {
  const r = await report('006')
  expect(r.provider).toMatchObject({
    said: 'other',
    other_said: 'reason',
    reason: 'comparison_response_not_found',
  })
  // The same tools and instructions as 005, its prefix read: no miss.
  expect(r.cause).toBe('no_miss')
})
