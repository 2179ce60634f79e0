/**
 * Every `holdfast` command fully registered: what tests and the help-sync check use. The real
 * entry (`main.ts`) registers only the command it runs, so one command never loads another's
 * modules.
 */
import { Command } from 'commander'
import { COMMANDS, programShell } from './main'
import { registerServe } from './serve'
import { registerEnv } from './env'
import { registerAgents } from './agents'
import { registerRun } from './run'
import { registerSteps } from './steps'
import { registerWhy } from './why'
import { registerConfig } from './config'
import { registerRoles } from './roles'
import { registerDispatch } from './dispatch'
import { registerAttempt } from './attempt'
import { registerCohort } from './cohort'
import { registerClients } from './clients'
import { registerTypes } from './types'
import { registerHooks } from './hooks'
import { registerReplay } from './replay'
import { registerRemote } from './remote'
import { registerRecover } from './recover'
import { registerOpen } from './open'
import { registerExport } from './export'
import { registerStatusline } from './statusline'

type Register = (program: Command) => void

/** Each command's full registration, in the order `--help` lists them. */
export const REGISTER: Readonly<Record<(typeof COMMANDS)[number]['name'], Register>> = {
  serve: registerServe,
  env: registerEnv,
  run: registerRun,
  agents: registerAgents,
  steps: registerSteps,
  why: registerWhy,
  roles: registerRoles,
  config: registerConfig,
  attempt: registerAttempt,
  cohort: registerCohort,
  dispatch: registerDispatch,
  clients: registerClients,
  types: registerTypes,
  hooks: registerHooks,
  remote: registerRemote,
  replay: registerReplay,
  recover: registerRecover,
  open: registerOpen,
  export: registerExport,
  statusline: registerStatusline,
}

/** The program with every command registered. */
export function buildProgram(): Command {
  const program = programShell()
  for (const c of COMMANDS) REGISTER[c.name](program)
  return program
}
