/** cli/steps' cells: the held column names at most two dropped tools, or says a pure reorder. */
import { heldCell } from '../../cli/steps'

describe('heldCell', () => {
  it('names the dropped tools, the first two and how many more', () => {
    expect(heldCell({ held: ['a'], hold_reason: 'applied' })).toBe('a')
    expect(heldCell({ held: ['a', 'b', 'c', 'd'], hold_reason: 'applied' })).toBe('a,b +2')
  })

  it('says a held reorder, and a dash when nothing was held', () => {
    expect(heldCell({ held: [], hold_reason: 'applied', reordered: true })).toBe('reordered')
    expect(heldCell({ held: [], hold_reason: 'no-subtraction' })).toBe('-')
  })
})
