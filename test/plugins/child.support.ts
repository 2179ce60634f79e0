/**
 * A script run in a child Node process with the swc require hook, for the plugin tests whose code
 * needs a real `import()` (plugin files, json-schema-to-typescript's prettier): jest's module
 * system cannot run one. The script prints one JSON value on stdout; `inChild` parses it.
 * Invariant: the child is started asynchronously (the test's own loopback servers keep answering)
 * and killed when it outlives `timeoutMs`.
 */
import { spawn } from 'node:child_process'
import { REGISTER, ROOT } from '../support/harness'

/** `require` of a source module by its path from the repository root, for use inside a script. */
export const src = (rel: string): string => `require(${JSON.stringify(`${ROOT}/${rel}`)})`

/** Run `script` (CommonJS, top-level await not available: wrap in an async function) and parse its stdout. */
export function inChild<T>(script: string, timeoutMs = 15_000): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-r', REGISTER, '-e', script], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    let err = ''
    child.stdout.on('data', (d: Buffer) => (out += d.toString()))
    child.stderr.on('data', (d: Buffer) => (err += d.toString()))
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(timer)
      if (code !== 0) return reject(new Error(`child exited with ${code}: ${err}`))
      try {
        resolve(JSON.parse(out) as T)
      } catch {
        reject(new Error(`child printed no JSON: ${out}\n${err}`))
      }
    })
  })
}
