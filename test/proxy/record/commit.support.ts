/**
 * Steps for the committer and commit-worker tests: a real workspace, a real journal holding each
 * step's send half and a streamed JSON answer (with its HEAD), and the finish and commit jobs the
 * server would send for it.
 */
import type { StepMeta } from '../../../generated/meta'
import type { FinishJob } from '../../../proxy/record/finish'
import type { CommitJob } from '../../../proxy/record'
import { Journal } from '../../../proxy/record/journal/writer'
import { homePaths } from '../../../proxy/store/home'

export const MODEL = 'claude-sonnet-4-5'

export function sentMeta(ws: string, agent: string, n: number): StepMeta {
  return {
    version: 1,
    workspace: ws,
    agent,
    step: String(n).padStart(3, '0'),
    dialect: 'anthropic',
    endpoint: '/v1/messages',
    started_at: '2026-12-02T00:00:00.000Z',
    route: { provider: 'anthropic', url: 'http://x/v1/messages', model: MODEL },
    request_headers: {},
    cache_keying_headers: {},
    hold: { applied: false, reason: 'first-step' },
    injected_tools: [],
    changes: [],
    request_bytes: 0,
  } as unknown as StepMeta
}

/** The answer a step gets: usage the finish must find (output_tokens = n). */
export const answerOf = (n: number): string =>
  JSON.stringify({
    content: [{ type: 'text', text: `answer ${n}` }],
    stop_reason: 'end_turn',
    usage: { input_tokens: 10, output_tokens: n, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
  })

/** A step's request; `pad` bytes more of text make it as large as asked (a chained agent's). */
export const requestOf = (agent: string, n: number, pad = 0): Buffer =>
  Buffer.from(
    `{"model":"${MODEL}","messages":[{"role":"user","content":"${agent} ${n} \u00e9${'x'.repeat(pad)}"}]}`,
  )

export interface JournaledStep {
  agent: string
  n: number
  request: Buffer
  answer: string
  finish: FinishJob
  /** The commit job the server sends: where the step is, and how to finish it. */
  commit: CommitJob
}

/** Write step `n` of `agent` into the workspace journal as the server does; the journal is closed after. */
export function journalSteps(
  home: string,
  ws: string,
  steps: readonly { agent: string; n: number; pad?: number }[],
): JournaledStep[] {
  const journal = new Journal(false)
  try {
    return steps.map(({ agent, n, pad }) => {
      const request = requestOf(agent, n, pad)
      const answer = answerOf(n)
      const entry = journal
        .agent(homePaths.agentJournal(home, ws, agent))
        .send(n, sentMeta(ws, agent, n), request)
      entry.sent()
      entry.chunk(Buffer.from(answer.slice(0, 10)))
      entry.chunk(Buffer.from(answer.slice(10)))
      entry.head({
        status: 200,
        headers: { 'content-type': 'application/json' },
        ttfb_ms: 1,
        total_ms: 2,
        ended_at: '2026-12-02T00:00:01.000Z',
      })
      const place = entry.place
      const finish: FinishJob = {
        dialect: 'anthropic',
        place,
        answered: { outcome: 'ok', status: 200, ttfbMs: 1, totalMs: 2, error: null },
        prices: undefined,
      }
      return {
        agent,
        n,
        request,
        answer,
        finish,
        commit: { agent, n, model: MODEL, request: place, finish },
      }
    })
  } finally {
    journal.close()
  }
}
