/**
 * Tests of the require hook that lets tests and the benchmark run `.ts` files in a plain node process.
 * Invariant: `node -r ./scripts/register.js` loads TypeScript with stack traces on .ts lines.
 */
import { execFile } from 'node:child_process'
import * as path from 'node:path'
import { promisify } from 'node:util'

const root = path.resolve(__dirname, '../..')

async function runNode(script: string): Promise<string> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['-r', './scripts/register.js', '-e', script],
    { cwd: root },
  )
  return stdout
}

test('a TypeScript module loads through the hook and its exports run', async () => {
  const out = await runNode("console.log(require('./test/support/fixture-ts-module.ts').greet('holdfast'))")
  expect(out).toBe('hello holdfast\n')
})

test('a TypeScript module is found without its extension', async () => {
  const out = await runNode("console.log(require('./test/support/fixture-ts-module').greet('again'))")
  expect(out).toBe('hello again\n')
})

test('stack traces point at the line of the .ts source, through the inline source map', async () => {
  const out = await runNode(
    "console.log(require('./test/support/fixture-ts-module.ts').made('boom').stack.split('\\n')[1])",
  )
  expect(out).toMatch(/fixture-ts-module\.ts:3:\d+\)?\n$/)
})
