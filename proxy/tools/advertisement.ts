/**
 * A client's advertisement (DESIGN §7): MCP `tools/list` elements mapped to
 * `{name, description, input_schema}` (a missing description is `""`), each checked (a path
 * component, unique in the client), stored at `<home>/clients/<client>/tools.json`. Invariant: the
 * file is rewritten only when the tools (or the rejected ones) changed, so `observed_at` is when
 * this advertisement was first seen. An absent or unreadable file reads as no advertisement.
 */
import fs from 'node:fs'
import path from 'node:path'
import { dequal } from 'dequal'
import { decodeAdvertisedTool, type AdvertisedTool } from '../core/loaded-set'
import { isObject } from '../core/json'
import { writeFileAtomic } from '../store/atomic'
import { fileStamp } from '../store/config/stamp'
import { clientDir } from './registration'

/** An advertised element that cannot be loaded, and why. */
export interface Rejected {
  name: string
  why: string
}

export interface Advertisement {
  tools: AdvertisedTool[]
  rejected: Rejected[]
}

export interface StoredAdvertisement extends Advertisement {
  client: string
  /** ISO time this advertisement was first observed (the file's last rewrite). */
  observed_at: string
}

/** The subset of an MCP tool this mapping reads. */
export interface McpToolLike {
  name: string
  description?: string
  inputSchema: unknown
}

/** MCP tools → advertised elements, in the host's order; a repeated name rejects every copy. */
export function mapAdvertisement(raw: readonly McpToolLike[]): Advertisement {
  const counts = new Map<string, number>()
  for (const t of raw) counts.set(t.name, (counts.get(t.name) ?? 0) + 1)
  const tools: AdvertisedTool[] = []
  const rejected: Rejected[] = []
  for (const t of raw) {
    const n = counts.get(t.name) ?? 0
    if (n > 1) {
      if (!rejected.some((r) => r.name === t.name)) {
        rejected.push({
          name: t.name,
          why: `advertised ${n} times, so which definition is meant is ambiguous`,
        })
      }
      continue
    }
    const decoded = decodeAdvertisedTool({
      name: t.name,
      description: t.description ?? '',
      input_schema: t.inputSchema,
    })
    if (decoded.ok) tools.push(decoded.value)
    else rejected.push({ name: t.name, why: decoded.error })
  }
  return { tools, rejected }
}

export const advertisementPath = (home: string, client: string): string =>
  path.join(clientDir(home, client), 'tools.json')

/** Decoded advertisements by file, with the stat they were read at: a routed call stats, not parses. */
const readCache = new Map<string, { stamp: string; value: StoredAdvertisement | undefined }>()

/** The stored advertisement, or undefined when there is none that reads back. */
export function readAdvertisement(home: string, client: string): StoredAdvertisement | undefined {
  const file = advertisementPath(home, client)
  const stamp = fileStamp(file)
  if (!stamp) return undefined
  const hit = readCache.get(file)
  if (hit?.stamp === stamp) return hit.value
  const value = decodeStored(file, client)
  readCache.set(file, { stamp, value })
  return value
}

function decodeStored(file: string, client: string): StoredAdvertisement | undefined {
  let v: unknown
  try {
    v = JSON.parse(fs.readFileSync(file, 'utf8'))
  } catch {
    return undefined // unreadable or torn: the next listing writes it again
  }
  if (!isObject(v) || typeof v.observed_at !== 'string' || !Array.isArray(v.tools)) return undefined
  const tools: AdvertisedTool[] = []
  for (const t of v.tools) {
    const d = decodeAdvertisedTool(t)
    if (!d.ok) return undefined
    tools.push(d.value)
  }
  const rejected = Array.isArray(v.rejected)
    ? v.rejected.filter(isObject).map((r) => ({ name: String(r.name), why: String(r.why) }))
    : []
  return { client, observed_at: v.observed_at, tools, rejected }
}

/** Store `ad` unless it equals what is stored; answers what is stored afterwards. */
export async function storeAdvertisement(
  home: string,
  client: string,
  ad: Advertisement,
  now = new Date(),
): Promise<StoredAdvertisement> {
  const old = readAdvertisement(home, client)
  if (old && dequal(old.tools, ad.tools) && dequal(old.rejected, ad.rejected)) return old
  const stored: StoredAdvertisement = { client, observed_at: now.toISOString(), ...ad }
  await writeFileAtomic(advertisementPath(home, client), `${JSON.stringify(stored, null, 2)}\n`)
  return stored
}
