/**
 * What accept's parse of a large body costs, in-process (the sources, as `scripts/register.js`
 * compiles them): the way it was (depth check, `JSON.parse` of the whole text, field checks,
 * top-level scan) against holdfast's (`parseBody`: the same checks, the scan first, then the parse
 * in pieces given it), for a 1 MB body of one message and one of 400 messages, with minor page
 * faults per parse. Each parse's value is kept alive for the
 * next four, as a server's requests in flight keep theirs.
 * Then the long conversation's late steps (bench/long.ts's bytes, steps 121–150): each read whole
 * against read on the step before's facts (core/incremental), CPU per read.
 * Run: `node -r ./scripts/register.js bench/parse.ts [parses=150]`. Asserts nothing.
 */
import type { JsonObject } from '../proxy/core/json'
import { MAX_NESTING, nestingDepth, scanTopLevel } from '../proxy/core/json-scan'
import { anthropic } from '../proxy/dialects'
import { parseBody } from '../proxy/stages/accept'
import { readOnFacts, readWhole, type ReadFacts } from '../proxy/core/incremental'
import { Conversation } from '../test/support/conversation'

const N = Number(process.argv[2] ?? 150)

const paragraph = 'The function reads the file and returns "lines".\n\tSee also: foo(), bar(). '
const shapes: Record<string, (i: number) => Buffer> = {
  'one 1 MB message': (i) =>
    Buffer.from(
      JSON.stringify({
        model: 'm',
        max_tokens: 16,
        messages: [{ role: 'user', content: `${i} ${'lorem ipsum dolor sit amet '.repeat(37_000)}` }],
      }),
    ),
  '400 messages, 1 MB': (i) =>
    Buffer.from(
      JSON.stringify({
        model: 'm',
        max_tokens: 16,
        messages: Array.from({ length: 400 }, (_, k) => ({
          role: k % 2 ? 'assistant' : 'user',
          content: [{ type: 'text', text: `${paragraph.repeat(32)}${i}.${k}` }],
        })),
      }),
    ),
}

/** accept's parse as it was: the depth check, JSON.parse of the whole text, the field checks, the scan. */
const plain = (b: Buffer): unknown => {
  nestingDepth(b, MAX_NESTING)
  const v = JSON.parse(b.toString('utf8')) as JsonObject
  anthropic.checkShape(v)
  scanTopLevel(b)
  return v
}
const holdfast = (b: Buffer): unknown => parseBody(b, anthropic).parsed

const faults = (): number => process.resourceUsage().minorPageFault

for (const [shape, make] of Object.entries(shapes)) {
  const bodies = Array.from({ length: 8 }, (_, i) => make(i))
  for (const [name, parse] of [
    ['plain', plain],
    ['holdfast', holdfast],
    ['plain', plain],
    ['holdfast', holdfast],
  ] as const) {
    const kept: unknown[] = []
    let ms = 0
    let pf = 0
    for (let i = 0; i < N + 20; i++) {
      const body = bodies[i % bodies.length] as Buffer
      const f0 = faults()
      const t0 = performance.now()
      kept.push(parse(body))
      if (i >= 20) {
        ms += performance.now() - t0
        pf += faults() - f0
      }
      if (kept.length > 4) kept.shift()
    }
    console.log(
      `${shape} (${(bodies[0] as Buffer).length} bytes), ${name}: ${(ms / N).toFixed(2)} ms, ${(pf / N).toFixed(0)} page faults per parse`,
    )
  }
}

/** CPU ms per call of `read` over the late steps, `rounds` times each. */
function cpuPer(late: Buffer[], read: (b: Buffer, i: number) => unknown, rounds = 10): number {
  for (let w = 0; w < 3; w++) late.forEach(read)
  const t0 = process.cpuUsage()
  for (let r = 0; r < rounds; r++) late.forEach(read)
  const u = process.cpuUsage(t0)
  return (u.user + u.system) / 1000 / (rounds * late.length)
}

const conversation = new Conversation(1)
const steps = Array.from({ length: 150 }, () => conversation.next())
const late = steps.slice(120)
const before = steps.slice(119, 149).map((b) => readWhole(b, anthropic) as ReadFacts)
for (let k = 0; k < 2; k++) {
  const whole = cpuPer(late, (b) => readWhole(b, anthropic))
  const tail = cpuPer(late, (b, i) => readOnFacts(before[i] as ReadFacts, b, anthropic))
  console.log(
    `long conversation steps 121–150 (${(late[0] as Buffer).length}–${(late[29] as Buffer).length} bytes): read whole ${whole.toFixed(3)} ms, on the step before's facts ${tail.toFixed(3)} ms of CPU per step`,
  )
}
