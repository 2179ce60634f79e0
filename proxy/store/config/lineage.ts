/**
 * Roles at a ref, read from the workspace repository: the followed config of a revision (via
 * core/lineage) and the roles its `providers.yaml` declares. Invariant: the config refs are read
 * at every call (ref files, then packed-refs), so a config commit made by anyone is followed from
 * the next step; what is derived from them is cached (governing per revision key while the config
 * refs are unchanged, parsed files per commit id), so a step costs the same at 500 as at 1.
 */
import fs from 'node:fs'
import path from 'node:path'
import { followConfig, foldGoverning, type Followed } from '../../core/lineage'
import type { ProviderRow } from '.'
import { isAncestor, listRefs, mergeBase, parsePackedRefs, readFileAt, type Repo } from '../git'
import { fileStamp } from './stamp'
import { parseProviders, PROVIDERS_FILE, type Parsed, type ProvidersConfig } from './providers'

export const CONFIG_PREFIX = 'refs/heads/config/'

export type Resolved =
  { ok: true; followed: Followed; roles: Parsed<ProvidersConfig> } | { ok: false; message: string }

export class ConfigReader {
  /** Per revision key: the config refs it was computed for, and the answer. */
  private readonly followedCache = new Map<
    string,
    { refs: string; answer: Resolved; bases: Map<string, { head: string; base: string | undefined }> }
  >()
  private readonly parsedCache = new Map<string, Parsed<ProvidersConfig>>()

  /** `rows` given: parse strictly (a role naming an undeclared row fails the file), as the hook does. */
  constructor(
    readonly repo: Repo,
    private readonly rows?: Readonly<Record<string, ProviderRow>>,
  ) {}

  private readonly ancestry = (a: string, b: string): Promise<boolean> => isAncestor(this.repo, a, b)

  /** The parsed providers.yaml at a commit (cached by commit id: commits never change). */
  async rolesAtCommit(commit: string): Promise<Parsed<ProvidersConfig>> {
    let parsed = this.parsedCache.get(commit)
    if (!parsed) {
      const bytes = await readFileAt(this.repo, commit, PROVIDERS_FILE)
      parsed = bytes
        ? parseProviders(bytes.toString('utf8'), `${PROVIDERS_FILE} at ${commit.slice(0, 8)}`, this.rows)
        : { ok: false, error: `${PROVIDERS_FILE} at ${commit.slice(0, 8)}: no such file` }
      this.parsedCache.set(commit, parsed)
    }
    return parsed
  }

  /**
   * The followed config of `revision` and its roles. `key` names what the revision stands for
   * (an agent: its branch only grows, so its governing commit changes only when a config ref
   * moves); pass the commit id itself for a one-off question. A lineage that moved forward keeps
   * its merge base with the revision, so only new or rewound lineages cost a history walk.
   */
  async resolve(key: string, revision: () => Promise<string | undefined>): Promise<Resolved> {
    const heads = this.configHeads()
    const refsKey = heads.map((h) => `${h.ref}=${h.oid}`).join('\n')
    const cached = this.followedCache.get(key)
    if (cached && cached.refs === refsKey) return cached.answer
    const rev = await revision()
    let answer: Resolved
    const bases = new Map<string, { head: string; base: string | undefined }>()
    if (!rev) answer = { ok: false, message: 'no commit to resolve roles at' }
    else {
      const candidates = []
      for (const h of heads) {
        const before = cached?.bases.get(h.ref)
        const base =
          before && (before.head === h.oid || (await isAncestor(this.repo, before.head, h.oid)))
            ? before.base
            : await mergeBase(this.repo, h.oid, rev)
        bases.set(h.ref, { head: h.oid, base })
        if (base) candidates.push({ ref: h.ref, base })
      }
      const governing = await foldGoverning(candidates, this.ancestry)
      if (!governing.ok) answer = { ok: false, message: governing.message }
      else {
        const followed = await followConfig(governing.commit, heads, this.ancestry)
        answer = { ok: true, followed, roles: await this.rolesAtCommit(followed.commit) }
      }
    }
    this.followedCache.set(key, { refs: refsKey, answer, bases })
    return answer
  }

  private heads: { stamp: string; list: { ref: string; oid: string }[] } | undefined

  /**
   * The `config/*` heads, read synchronously on every step: two `stat`s when nothing changed
   * (a ref moves by rename, which changes its directory; a repack rewrites `packed-refs`).
   */
  configHeads(): { ref: string; oid: string }[] {
    const dir = path.join(this.repo.gitdir, CONFIG_PREFIX)
    const packed = path.join(this.repo.gitdir, 'packed-refs')
    const stamp = `${fileStamp(dir) ?? '-'}|${fileStamp(packed) ?? '-'}`
    if (this.heads?.stamp === stamp) return this.heads.list
    const found = new Map<string, string>()
    let nested = false
    const walk = (rel: string): void => {
      const at = path.join(dir, rel)
      for (const e of fs.existsSync(at) ? fs.readdirSync(at, { withFileTypes: true }) : []) {
        const name = rel ? `${rel}/${e.name}` : e.name
        if (e.isDirectory()) {
          nested = true
          walk(name)
        } else if (e.isFile() && !e.name.endsWith('.lock')) {
          const oid = fs.readFileSync(path.join(dir, name), 'utf8').trim()
          if (/^[0-9a-f]{40}$/.test(oid)) found.set(CONFIG_PREFIX + name, oid)
        }
      }
    }
    walk('')
    const text = fs.existsSync(packed) ? fs.readFileSync(packed, 'utf8') : undefined
    for (const [ref, oid] of parsePackedRefs(text)) {
      if (ref.startsWith(CONFIG_PREFIX) && !found.has(ref)) found.set(ref, oid)
    }
    const list = [...found].sort(([a], [b]) => (a < b ? -1 : 1)).map(([ref, oid]) => ({ ref, oid }))
    // Nested names (config/a/b, made by plain git) change only their own directory: never cache.
    this.heads = nested ? undefined : { stamp, list }
    return list
  }
}

/** Problems with every lineage tip's providers.yaml against holdfast.yaml's rows (warned at serve start). */
export async function configWarnings(
  repo: Repo,
  rows: Readonly<Record<string, ProviderRow>>,
): Promise<string[]> {
  const reader = new ConfigReader(repo, rows)
  const out: string[] = []
  for (const h of await listRefs(repo, CONFIG_PREFIX)) {
    const parsed = await reader.rolesAtCommit(h.oid)
    if (!parsed.ok) out.push(`${h.ref.replace('refs/heads/', '')}: ${parsed.error}`)
  }
  return out
}
