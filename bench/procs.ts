/**
 * The benches' processes: start a server (the fake upstream, the bare forwarder, holdfast) and read
 * the URL from its first line. Every process started here is killed when the bench exits, however
 * it exits, so a failed run never leaves servers behind.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import path from 'node:path'
import readline from 'node:readline'

export const ROOT = path.join(__dirname, '..')
export const REGISTER = path.join(ROOT, 'scripts', 'register.js')

export interface Proc {
  child: ChildProcess
  url: string
  pid: number
}

const started: ChildProcess[] = []
process.on('exit', () => {
  for (const c of started) c.kill('SIGKILL')
})

/** `node <args>` from the package root; resolves once it printed a line with its URL. */
export async function start(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Proc> {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  started.push(child)
  const line = await new Promise<string>((resolve, reject) => {
    readline.createInterface({ input: child.stdout as NodeJS.ReadableStream }).once('line', resolve)
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited ${code}`)))
  })
  const url = /(http:\/\/\S+)/.exec(line)?.[1]
  if (!url) throw new Error(`no url in: ${line}`)
  return { child, url, pid: child.pid as number }
}
