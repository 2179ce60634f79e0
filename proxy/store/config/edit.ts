/**
 * Editing a config lineage without a worktree: read `providers.yaml` at `config/<lineage>`,
 * change one role, validate the result exactly as the git hook does (`parseProviders` with
 * holdfast.yaml's rows), commit it on the lineage's tip and move the ref by compare-and-swap.
 * Invariant: an edit that would not validate writes nothing; the ref never moves backwards.
 */
import { checkName } from '../../core/naming'
import type { ProviderRow } from '.'
import { casRef, commitFiles, readFileAt, readRef, type Repo } from '../git'
import { configRef } from '../../core/layout'
import { parseProviders, PROVIDERS_FILE, type ProvidersConfig, renderProviders, type Role } from './providers'

export class ConfigEditError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'ConfigEditError'
  }
}

/** The lineage's tip and its parsed providers.yaml (a tip without one reads as no roles). */
export async function readLineage(
  repo: Repo,
  lineage: string,
  rows?: Readonly<Record<string, ProviderRow>>,
): Promise<{ tip: string; config: ProvidersConfig }> {
  const problem = checkName('lineage', lineage)
  if (problem) throw new ConfigEditError(problem)
  const tip = await readRef(repo, configRef(lineage))
  if (!tip)
    throw new ConfigEditError(`no config lineage "${lineage}" (refs/heads/config/${lineage} does not exist)`)
  const bytes = await readFileAt(repo, tip, PROVIDERS_FILE)
  if (!bytes) return { tip, config: { roles: {} } }
  const parsed = parseProviders(bytes.toString('utf8'), `${PROVIDERS_FILE} at config/${lineage}`, rows)
  if (!parsed.ok) throw new ConfigEditError(parsed.error)
  return { tip, config: parsed.value }
}

/** Commit `config` as the lineage's new providers.yaml, validated first; returns the commit id. */
export async function writeLineage(
  repo: Repo,
  lineage: string,
  tip: string,
  config: ProvidersConfig,
  rows: Readonly<Record<string, ProviderRow>>,
  message: string,
): Promise<string> {
  const text = renderProviders(config)
  const check = parseProviders(text, PROVIDERS_FILE, rows)
  if (!check.ok) throw new ConfigEditError(check.error)
  const oid = await commitFiles(repo, { parent: tip, files: { [PROVIDERS_FILE]: text }, message })
  await casRef(repo, configRef(lineage), oid, tip)
  return oid
}

export async function setRole(
  repo: Repo,
  lineage: string,
  name: string,
  role: Role,
  rows: Readonly<Record<string, ProviderRow>>,
): Promise<string> {
  const problem = checkName('role', name)
  if (problem) throw new ConfigEditError(problem)
  const { tip, config } = await readLineage(repo, lineage)
  const next: ProvidersConfig = { roles: { ...config.roles, [name]: role } }
  const verb = Object.hasOwn(config.roles, name) ? 'set' : 'add'
  return writeLineage(
    repo,
    lineage,
    tip,
    next,
    rows,
    `config: ${verb} role ${name} → ${role.provider}/${role.model}`,
  )
}

export async function removeRole(
  repo: Repo,
  lineage: string,
  name: string,
  rows: Readonly<Record<string, ProviderRow>>,
): Promise<string> {
  const { tip, config } = await readLineage(repo, lineage)
  if (!Object.hasOwn(config.roles, name)) {
    const declared = Object.keys(config.roles).sort()
    throw new ConfigEditError(
      `config/${lineage} declares no role "${name}"; declared roles: ${declared.length ? declared.join(', ') : 'none'}`,
    )
  }
  const roles = { ...config.roles }
  delete roles[name]
  return writeLineage(repo, lineage, tip, { roles }, rows, `config: remove role ${name}`)
}
