/** A JSON text as bytes with its top-level scan (tests of the byte scanner and of splicing). */
import { type ScannedTop, scanTopLevel } from '../../proxy/core/json-scan'

export function scan(text: string): { body: Buffer; top: ScannedTop } {
  const body = Buffer.from(text)
  JSON.parse(text) // the contract: scanTopLevel runs on bodies JSON.parse accepted
  const top = scanTopLevel(body)
  if (!top.ok) throw new Error(top.error)
  return { body, top }
}
