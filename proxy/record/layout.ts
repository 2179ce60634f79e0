/**
 * What a step's record looks like: the names of its files (DESIGN §2 "record"). One home for the
 * layout: the journal, the commit and every reader take the names from here.
 */
import type { StepMeta } from '../../generated/meta'

export const REQUEST_FILE = 'request.json'
export const META_FILE = 'meta.json'
export const RESPONSE_FILES = ['response.json', 'response.sse', 'response.txt'] as const
export type ResponseFile = (typeof RESPONSE_FILES)[number]

/** `meta.json` as committed: indented JSON and a final newline. */
export function metaBytes(meta: StepMeta): Buffer {
  return Buffer.from(JSON.stringify(meta, null, 2) + '\n')
}
