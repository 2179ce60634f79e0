/**
 * store/git/delta: a delta remakes its target exactly from its base, whatever the edit (seeded
 * random inserts, deletes, replaces and moves, 300 rounds); for a conversation that grows the way
 * Claude Code's does (messages added before the system and tools, the breakpoint moved) a delta is
 * about the size of what was added; an unrelated target is one insert and not worth storing as a
 * delta; the splice delta of a tree edit remakes the tree; runs of equal bytes are measured exactly.
 */
import fs from 'node:fs'
import path from 'node:path'
import { applyDelta, commonRun, deltaOf, spliceDelta, worthIt } from '../../../../proxy/store/git/delta'

/** A small seeded generator (mulberry32): the same rounds every run. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

describe('deltaOf', () => {
  it('remakes the target exactly after any edit of the base (300 seeded rounds)', () => {
    const rnd = random(20261206)
    const text = (n: number): Buffer =>
      Buffer.from(Array.from({ length: n }, () => 'abcdefghij{}[]",: \n'[Math.floor(rnd() * 19)]).join(''))
    for (let round = 0; round < 300; round++) {
      const base = text(Math.floor(rnd() * 20_000))
      let target = Buffer.from(base)
      for (let e = Math.floor(rnd() * 6); e >= 0; e--) {
        const at = Math.floor(rnd() * (target.length + 1))
        const len = Math.floor(rnd() * 500)
        const kind = Math.floor(rnd() * 4)
        if (kind === 0) target = Buffer.concat([target.subarray(0, at), text(len), target.subarray(at)])
        else if (kind === 1) target = Buffer.concat([target.subarray(0, at), target.subarray(at + len)])
        else if (kind === 2)
          target = Buffer.concat([target.subarray(0, at), text(len), target.subarray(at + len)])
        else target = Buffer.concat([target.subarray(at), target.subarray(0, at)]) // moved
      }
      const d = deltaOf(base, target)
      expect(applyDelta(base, d).equals(target)).toBe(true)
    }
  })

  it('is about the size of what a Claude Code step added: messages before system and tools, the breakpoint moved', () => {
    const fixture = path.join(
      __dirname,
      '..',
      '..',
      '..',
      'fixtures',
      'claude-code',
      '2.1.197',
      'plain',
      'main.json',
    )
    const body = (JSON.parse(fs.readFileSync(fixture, 'utf8')) as { body: Record<string, unknown> }).body
    const messages: { role: string; content: { type: string; text?: string; cache_control?: object }[] }[] = [
      { role: 'user', content: [{ type: 'text', text: 'Read the files and fix the bug.' }] },
    ]
    const bytes = (): Buffer => {
      const last = messages[messages.length - 1]!.content
      last[last.length - 1]!.cache_control = { type: 'ephemeral' }
      const b = Buffer.from(JSON.stringify({ ...body, messages }))
      delete last[last.length - 1]!.cache_control
      return b
    }
    let previous = bytes()
    for (let step = 1; step <= 30; step++) {
      const file = Array.from(
        { length: 80 },
        (_, i) => `line ${step}.${i}: const x${i} = compute(${i * step})`,
      ).join('\n')
      messages.push({ role: 'assistant', content: [{ type: 'text', text: `Step ${step}: reading.` }] })
      messages.push({ role: 'user', content: [{ type: 'text', text: file }] })
      const next = bytes()
      const d = deltaOf(previous, next)
      expect(applyDelta(previous, d).equals(next)).toBe(true)
      const added = next.length - previous.length
      expect(d.length).toBeLessThan(added * 1.1 + 200)
      previous = next
    }
  })

  it('is one insert for a target unrelated to its base, and then not worth storing as a delta', () => {
    const base = Buffer.from('x'.repeat(5000))
    const target = Buffer.from('y'.repeat(5000))
    const d = deltaOf(base, target)
    expect(applyDelta(base, d).equals(target)).toBe(true)
    expect(worthIt(d, target.length)).toBe(false)
    expect(worthIt(deltaOf(base, Buffer.concat([base, Buffer.from('tail')])), base.length + 4)).toBe(true)
  })

  it('copies everything of an identical target and handles empty bases and targets', () => {
    const b = Buffer.from('same bytes '.repeat(1000))
    expect(deltaOf(b, b).length).toBeLessThan(20)
    for (const [x, y] of [
      ['', 'new'],
      ['old', ''],
      ['', ''],
    ]) {
      const base = Buffer.from(x as string)
      const target = Buffer.from(y as string)
      expect(applyDelta(base, deltaOf(base, target)).equals(target)).toBe(true)
    }
  })
})

describe('spliceDelta and commonRun', () => {
  it('remakes a base with bytes spliced in, and measures equal runs to the byte across blocks', () => {
    const base = Buffer.from('0123456789'.repeat(1000))
    const insert = Buffer.from('INSERTED'.repeat(40))
    const target = Buffer.concat([base.subarray(0, 5003), insert, base.subarray(5010)])
    expect(applyDelta(base, spliceDelta(base.length, 5003, 7, insert, target.length)).equals(target)).toBe(
      true,
    )
    expect(commonRun(base, 0, target, 0)).toBe(5003)
    expect(commonRun(base, 5010, target, 5003 + insert.length)).toBe(base.length - 5010)
  })
})
