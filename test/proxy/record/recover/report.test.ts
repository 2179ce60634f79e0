/**
 * record/recover/report: one line per thing a recovery wants an operator to know, warnings for
 * what was set aside, moved back, left waiting or kept damaged, and an info line for what was
 * committed; a recovery that did nothing says nothing.
 */
import { describeRecovery, type Recovery } from '../../../../proxy/record/recover/report'

const nothing: Recovery = {
  refs: [],
  packs: [],
  orphans: [],
  rewound: [],
  committed: 0,
  waiting: [],
  damaged: [],
  gaps: [],
  unrecorded: [],
  quarantined: [],
}

describe('describeRecovery', () => {
  it('says nothing of a recovery that did nothing', () => {
    expect(describeRecovery('w', nothing)).toEqual([])
  })

  it('says each thing it did, one line each, at its level', () => {
    const lines = describeRecovery('w', {
      refs: [{ ref: 'refs/heads/agents/a', to: '/h/damaged/refs/a' }],
      packs: [{ name: 'pack-1', reason: 'its index does not read', to: '/h/damaged/packs' }],
      orphans: [],
      rewound: [
        {
          ref: 'refs/heads/agents/a',
          from: 'f'.repeat(40),
          to: 'a'.repeat(40),
          lost: { from: 4, to: 18 },
          reason: 'its tip does not read',
        },
      ],
      committed: 3,
      waiting: [{ agent: 'b', from: 2, to: 5, error: 'EROFS' }],
      damaged: [{ agent: 'c', file: '001.log', offset: 0, length: 7, kind: 'torn', kept: '/q/c/damaged/x' }],
      gaps: [{ agent: 'c', n: 9 }],
      unrecorded: [],
      quarantined: [{ agent: 'd/e', step: '001', reason: 'not a branch name' }],
    })
    expect(lines.map((l) => l.level)).toEqual([
      'warn',
      'warn',
      'warn',
      'info',
      'warn',
      'warn',
      'warn',
      'warn',
    ])
    expect(lines[0]?.line).toBe('w: refs/heads/agents/a held no object id; moved aside to /h/damaged/refs/a')
    expect(lines[2]?.line).toBe(
      'w: its tip does not read; moved back to aaaaaaaaaaaa, steps 004..018 are no longer on it (the journal commits again those it still holds; their numbers are not given again)',
    )
    expect(lines[3]?.line).toBe('w: committed 3 step(s) from the journal')
    expect(lines[4]?.line).toContain('w/b: steps 002..005 wait in the journal (EROFS)')
    expect(lines[5]?.line).toContain('w/c: step 009 was recorded but its journal frame is damaged')
    expect(lines[6]?.line).toBe('w/c: 7 torn journal bytes kept at /q/c/damaged/x')
    expect(lines[7]?.line).toBe('w/d/e: step 001 moved aside: not a branch name')
  })

  it("says which numbers lost journal bytes may have held, and where a damaged send half's whole answer frames are kept", () => {
    const lines = describeRecovery('w', {
      ...nothing,
      unrecorded: [{ agent: 'z', from: 4, to: 7, kept: '/q/z/lost-004-007.txt' }],
      damaged: [
        {
          agent: 'f',
          file: '001.log',
          offset: 600,
          length: 171,
          kind: 'unclaimed',
          step: 2,
          type: 2,
          kept: '/q/f/damaged/001@600-002.bin',
        },
      ],
    }).map((l) => l.line)
    expect(lines).toEqual([
      'w/z: steps 004..007 may have been recorded in journal bytes a power cut or a crash zeroed or cut; there is no record of them, and their numbers are not given again (/q/z/lost-004-007.txt)',
      "w/f: step 002's answer frames are whole but its send half is damaged: they are kept at /q/f/damaged/001@600-002.bin, the answer alone in /q/f/damaged/001@600-002.answer",
    ])
  })

  it('says in one line how many orphan pack files a start removed, and which', () => {
    expect(describeRecovery('w', { ...nothing, orphans: ['pack-1.pack', 'tmp_pack_hf1'] })).toEqual([
      {
        level: 'warn',
        line: 'w: removed 2 orphan pack files: pack-1.pack, tmp_pack_hf1 (left by a process killed while it wrote or removed a pack; no index named them)',
      },
    ])
  })

  it('says when a branch could not be moved back to any commit and starts again', () => {
    const [l] = describeRecovery('w', {
      ...nothing,
      rewound: [
        { ref: 'refs/heads/agents/a', from: 'f'.repeat(40), to: null, lost: null, reason: 'unreadable' },
      ],
    })
    expect(l?.line).toBe(
      'w: unreadable; no earlier commit of it reads: the branch starts again (its old value is kept under damaged/refs/)',
    )
  })
})
