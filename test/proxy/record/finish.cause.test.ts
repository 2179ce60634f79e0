/**
 * The span's cause (`holdfast.cause`): made where the finish runs, from the meta finished before
 * it and what the server saw move; a first step is `first_step`; without what moved, or when the
 * meta kept is not the step before, no cause is guessed.
 */
import type { StepMeta } from '../../../generated/meta'
import type { PrefixMoves } from '../../../proxy/core/why'
import { moves } from '../../support/why-moves'
import { type FinishJob, spanOf } from '../../../proxy/record/finish'

const meta = (step: string, over: Partial<StepMeta> = {}): StepMeta =>
  ({
    version: 1,
    workspace: 'w',
    agent: `a-${expect.getState().currentTestName ?? ''}`,
    step,
    dialect: 'anthropic',
    endpoint: '/v1/messages',
    started_at: '2030-01-01T00:00:00.000Z',
    ended_at: '2030-01-01T00:00:02.000Z',
    route: { provider: 'anthropic', url: 'https://api.anthropic.com/v1/messages', model: 'claude-x' },
    request_headers: {},
    cache_keying_headers: {},
    hold: { applied: false, reason: 'no-subtraction', held: [] },
    injected_tools: [],
    changes: [],
    request_bytes: 10,
    outcome: 'ok',
    status: 200,
    usage: { input_tokens: 3, output_tokens: 5, cache_read_tokens: 1000, cache_write_tokens: 20 },
    stop_reason: 'end_turn',
    ...over,
  }) as StepMeta

const still = moves()

const job = (moved?: PrefixMoves): FinishJob =>
  ({
    dialect: 'anthropic',
    span: {
      capture: false,
      semconv: 'stable',
      acceptedAt: Date.parse('2030-01-01T00:00:00.000Z'),
      request: { stream: false },
      ...(moved ? { moves: moved } : {}),
    },
  }) as unknown as FinishJob

const cause = (j: FinishJob, m: StepMeta): unknown => spanOf(j, m)?.attributes['holdfast.cause']

test('a first step is first_step, a read as left is no_miss, a changed system prompt is named', () => {
  expect(cause(job(), meta('001'))).toBe('first_step')
  expect(cause(job(still), meta('002'))).toBe('no_miss')
  const missed = { input_tokens: 1200, output_tokens: 5, cache_read_tokens: 0, cache_write_tokens: 1000 }
  expect(cause(job({ ...still, system: true }), meta('003', { usage: missed }))).toBe('system_prompt_changed')
})

test('without what moved, or after a gap in the steps finished, no cause is guessed', () => {
  expect(cause(job(), meta('001'))).toBe('first_step')
  expect(cause(job(), meta('002'))).toBeUndefined()
  expect(cause(job(still), meta('004'))).toBeUndefined()
  expect(cause(job(still), meta('005'))).toBe('no_miss')
})
