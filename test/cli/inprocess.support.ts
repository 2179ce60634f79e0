/**
 * The `holdfast` program run in this process, as `main` runs it: commander's own exits keep their
 * code, any other error is one `holdfast: <message>` line on stderr and exit 1 (a CliError's own
 * code). stdout and stderr are captured, and a `process.exitCode` the command sets is returned and
 * reset. One run at a time (the streams are spied on).
 */
import { CommanderError } from 'commander'
import { buildProgram } from '../../cli/program'
import { CliError } from '../../cli/output'

export interface InProcessRun {
  code: number
  stdout: string
  stderr: string
}

export async function runCli(args: string[]): Promise<InProcessRun> {
  const out: string[] = []
  const err: string[] = []
  const capture =
    (into: string[]) =>
    (chunk: string | Uint8Array): boolean => {
      into.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'))
      return true
    }
  const stdout = jest.spyOn(process.stdout, 'write').mockImplementation(capture(out))
  const stderr = jest.spyOn(process.stderr, 'write').mockImplementation(capture(err))
  const before = process.exitCode
  process.exitCode = undefined
  let code: number
  try {
    await buildProgram().parseAsync(['node', 'holdfast', ...args])
    code = Number(process.exitCode ?? 0)
  } catch (e) {
    if (e instanceof CommanderError) code = e.exitCode
    else {
      err.push(`holdfast: ${(e as Error).message}\n`)
      code = e instanceof CliError ? e.exitCode : 1
    }
  } finally {
    stdout.mockRestore()
    stderr.mockRestore()
    process.exitCode = before
  }
  return { code, stdout: out.join(''), stderr: err.join('') }
}
