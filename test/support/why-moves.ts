/** A PrefixMoves with nothing moved, and the fields a test names over it (tests of why and its words). */
import type { PrefixMoves } from '../../proxy/core/why'

export const moves = (over: Partial<PrefixMoves> = {}): PrefixMoves => ({
  model: false,
  tools: false,
  system: false,
  head: false,
  keying: [],
  firstDifference: null,
  difference: null,
  toolChanges: null,
  ...over,
})
