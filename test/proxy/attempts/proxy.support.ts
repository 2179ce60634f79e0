/**
 * A running proxy ready for attempts (shared by the attempt, dispatch and cohort tests): the fake
 * upstream behind provider rows that carry an api_key_env (`keyed` anthropic, `keyedai` openai),
 * agent `main` with three recorded steps in workspace `att`, and roles declared on config/default.
 * Invariant: `close()` stops the proxy and the fake and removes the home.
 */
import { setRole } from '../../../proxy/store/config/edit'
import { openRepo } from '../../../proxy/store/git'
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream'
import { startProxy, type Proxy } from '../../support/harness'

export const WS = 'att'
export const KEY_ENV = 'HF_ATTEMPT_KEY'

export interface AttemptsProxy {
  p: Proxy
  fake: FakeUpstream
  /** Send one anthropic step as a client would. */
  ask(agent: string, content: string, extra?: object): Promise<number>
  close(): Promise<void>
}

/** Roles: reviewer (haiku), writer (opus), critic (haiku, max 321), nokey (row without a key), gpt (openai row). */
export async function startAttemptsProxy(steps = 3): Promise<AttemptsProxy> {
  process.env[KEY_ENV] = 'sk-attempt'
  const fake = await startFakeUpstream()
  const p = await startProxy({
    fake,
    config: {
      providers: {
        keyed: { dialect: 'anthropic', base_url: fake.anthropicBaseUrl, api_key_env: KEY_ENV },
        keyedai: { dialect: 'openai', base_url: fake.openaiBaseUrl, api_key_env: KEY_ENV },
      },
    },
  })
  const ask = async (agent: string, content: string, extra: object = {}): Promise<number> => {
    const res = await fetch(`${p.url}/w/${WS}/a/${agent}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({
        model: 'claude-sonnet-4-5',
        max_tokens: 100,
        messages: [{ role: 'user', content }],
        ...extra,
      }),
    })
    await res.arrayBuffer()
    return res.status
  }
  for (let i = 1; i <= steps; i++) await ask('main', `question ${i}`)
  await p.settled()
  const rows = p.server.ctx.config.providers
  const repo = openRepo(p.repo(WS))
  await setRole(repo, 'default', 'reviewer', { provider: 'keyed', model: 'claude-haiku-4-5' }, rows)
  await setRole(repo, 'default', 'writer', { provider: 'keyed', model: 'claude-opus-4-5' }, rows)
  await setRole(
    repo,
    'default',
    'critic',
    { provider: 'keyed', model: 'claude-haiku-4-5', max_output_tokens: 321 },
    rows,
  )
  await setRole(repo, 'default', 'nokey', { provider: 'anthropic', model: 'claude-opus-4-5' }, rows)
  await setRole(repo, 'default', 'gpt', { provider: 'keyedai', model: 'gpt-5' }, rows)
  return {
    p,
    fake,
    ask,
    close: async () => {
      await p.close()
      await fake.close()
    },
  }
}
