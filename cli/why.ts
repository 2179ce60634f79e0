/**
 * `holdfast why <ws> <agent> <NNN>`: what moved in the cached prefix between a step and the one
 * before (model, system, tools, head, cache-keying fields, the first difference with an excerpt of
 * both sides), a compaction, whether the hold applied and which tools it held, and the provider's
 * own cache counters. The words are proxy/core/why-words; this file reads the two steps.
 */
import type { Command } from 'commander'
import type { JsonObject } from '../proxy/core/json'
import { formatStep, parseStep } from '../proxy/core/naming'
import { prefixMoves, type PrefixMoves } from '../proxy/core/why'
import { explainStep, type WhyFacts } from '../proxy/core/why-words'
import { dialectByName } from '../proxy/dialects'
import type { StepMeta } from '../generated/meta'
import { resolveHome } from '../proxy/store/home'
import { readStepFile, readStepMeta, readStepRequest } from '../proxy/record/read'
import { REQUEST_FILE } from '../proxy/record/layout'
import { RecordFault } from '../proxy/core/hold'
import { recordParser } from '../proxy/core/record'
import { Workspace } from '../proxy/store/workspace'
import { existingAgent, existingWorkspace } from './lookup'
import { CliError, printJson } from './output'

export interface WhyReport {
  step: string
  previous: string | null
  moves: PrefixMoves | null
  hold: StepMeta['hold'] | null
  usage: StepMeta['usage'] | null
  changes: StepMeta['changes']
  summary: string[]
}

async function readRequest(ws: Workspace, agent: string, n: number): Promise<JsonObject | undefined> {
  try {
    return (await readStepRequest(ws, agent, n))?.body
  } catch (err) {
    throw new CliError((err as Error).message)
  }
}

export async function why(home: string, wsName: string, agent: string, stepName: string): Promise<WhyReport> {
  const ws = await existingWorkspace(home, wsName)
  await existingAgent(ws, agent)
  const n = parseStep(stepName) ?? parseStep(stepName.padStart(3, '0'))
  if (n === undefined) throw new CliError(`"${stepName}" is not a step number (001, 002, …)`)
  const meta = await readStepMeta(ws, agent, n)
  const cur = await readRequest(ws, agent, n)
  if (!meta || !cur) throw new CliError(`no step ${formatStep(n)} recorded for ${wsName}/${agent}`)
  const dialect = dialectByName(meta.dialect)
  const prevMeta = n > 1 ? await readStepMeta(ws, agent, n - 1) : undefined
  // The previous record read back as the hold reads it: a faulty one is said, not compared.
  let prev: JsonObject | undefined
  let prevFault: string | undefined
  if (n > 1) {
    const bytes = await readStepFile(ws, agent, n - 1, REQUEST_FILE)
    try {
      prev = bytes && recordParser(dialect)(bytes, `step ${formatStep(n - 1)}'s request.json`)
    } catch (err) {
      if (!(err instanceof RecordFault)) throw err
      prevFault = err.message
    }
  }
  let moves: PrefixMoves | null = null
  const facts: WhyFacts = { step: formatStep(n), meta }
  if (prevFault) facts.nothingToCompare = `${prevFault}: nothing to compare`
  else if (!prev || !prevMeta) {
    facts.nothingToCompare =
      n === 1
        ? 'first step: the whole prefix is new'
        : `step ${formatStep(n - 1)} has no record: nothing to compare`
  } else {
    moves = prefixMoves(dialect, prev, cur, prevMeta.cache_keying_headers, meta.cache_keying_headers)
    facts.previous = { step: formatStep(n - 1), meta: prevMeta, moves }
  }
  const summary = explainStep(facts)
  const h = meta.hold
  return {
    step: formatStep(n),
    previous: prev ? formatStep(n - 1) : null,
    moves,
    hold: h,
    usage: meta.usage ?? null,
    changes: meta.changes,
    summary,
  }
}

export function registerWhy(program: Command): void {
  program
    .command('why')
    .description(
      'explain a step: what moved in the cached prefix, whether the hold applied, the cache counters',
    )
    .argument('<ws>', 'workspace')
    .argument('<agent>', 'agent')
    .argument('<NNN>', 'step number')
    .option('--home <dir>', 'holdfast home (default $HOLDFAST_HOME, then ~/.holdfast)')
    .option('--json', 'print JSON')
    .action(async (wsName: string, agent: string, step: string, opts: { home?: string; json?: boolean }) => {
      const report = await why(resolveHome(opts.home), wsName, agent, step)
      if (opts.json) return printJson(report)
      process.stdout.write(`step ${report.step} of ${wsName}/${agent}\n`)
      for (const line of report.summary) process.stdout.write(`  ${line}\n`)
      // The hold's own change is the summary's hold line already.
      for (const c of report.changes)
        if (!c.why.startsWith('hold: ')) process.stdout.write(`  changed ${c.field}: ${c.why}\n`)
    })
}
