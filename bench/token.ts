/**
 * What the token check costs a request (proxy/http/access.ts, as server.ts runs it on every request):
 * the key headers compared with the token, then x-holdfast-token when they do not hold it. Each
 * comparison hashes the value given (the token's own digest is made once). Three rounds of 200 000
 * for a request with a key of its own, one carrying the token as its key, and one with no key.
 * `node -r ./scripts/register.js bench/token.ts`. Asserts nothing.
 */
import { headerCarriesToken, tokenKeyHeaders } from '../proxy/http/access'

const token = 'Zx1_-abcdefghijklmnopqrstuvwxyz0123456789AB'
const base = { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', host: '127.0.0.1:8787' }
const cases: [string, Record<string, string>][] = [
  ['a key of its own', { ...base, 'x-api-key': `sk-ant-api03-${'x'.repeat(90)}` }],
  ['the token as its key', { ...base, 'x-api-key': token }],
  ['no key', base],
]
const N = 200_000
for (const [what, headers] of cases) {
  const rounds: string[] = []
  for (let round = 0; round < 3; round++) {
    const t0 = process.hrtime.bigint()
    for (let i = 0; i < N; i++) {
      if (tokenKeyHeaders(token, headers).length === 0) headerCarriesToken(token, headers)
    }
    rounds.push((Number(process.hrtime.bigint() - t0) / N / 1000).toFixed(2))
  }
  console.log(`${what}: ${rounds.join(', ')} µs per request`)
}
