/**
 * scripts/check-tests.js: the test tree mirrors proxy/, hooks/, plugins/ and cli/. A source file is
 * covered by `test/<dir>/<name>.test.ts` or `test/<dir>/<name>.<topic>.test.ts` (an index by
 * `test/<dir>.test.ts`); a test file there must name a source file; test/clients and test/support
 * are not mirrored. Checked on small trees built here, and on this repository.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { check, COVERED_ELSEWHERE, MAX_EXEMPT } = require('../../scripts/check-tests.js') as {
  check: (
    root: string,
    coveredElsewhere?: Record<string, string>,
  ) => { problems: string[]; covered: Map<string, string[]> }
  COVERED_ELSEWHERE: Record<string, string>
  MAX_EXEMPT: number
}

const roots: string[] = []
afterAll(() => {
  for (const r of roots) fs.rmSync(r, { recursive: true, force: true })
})

function tree(files: string[]): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'holdfast-check-tests-'))
  roots.push(root)
  for (const f of files) {
    fs.mkdirSync(path.dirname(path.join(root, f)), { recursive: true })
    fs.writeFileSync(path.join(root, f), '')
  }
  return root
}

describe('a source file and its test', () => {
  it('accepts a file whose test sits at the mirrored path', () => {
    const root = tree(['proxy/core/hold.ts', 'test/proxy/core/hold.test.ts'])
    expect(check(root, {}).problems).toEqual([])
  })

  it('accepts topic tests named <name>.<topic>.test.ts, and counts each for its file', () => {
    const root = tree(['proxy/server.ts', 'test/proxy/server.fuzz.test.ts', 'test/proxy/server.sdk.test.ts'])
    const { problems, covered } = check(root, {})
    expect(problems).toEqual([])
    expect(covered.get('proxy/server.ts')).toEqual([
      'test/proxy/server.fuzz.test.ts',
      'test/proxy/server.sdk.test.ts',
    ])
  })

  it('accepts an index tested as the folder (test/<dir>.test.ts) or as test/<dir>/index.test.ts', () => {
    const root = tree([
      'proxy/record/index.ts',
      'proxy/dialects/index.ts',
      'test/proxy/record.test.ts',
      'test/proxy/dialects/index.test.ts',
    ])
    expect(check(root, {}).problems).toEqual([])
  })

  it('names each source file without a test, with the path its test should have', () => {
    const root = tree(['cli/why.ts', 'proxy/store/hook-install.ts', 'test/proxy/store/hook-install.test.ts'])
    expect(check(root, {}).problems).toEqual([
      'cli/why.ts has no test (expected test/cli/why.test.ts or test/cli/why.<topic>.test.ts)',
    ])
  })

  it('refuses a test file that names no source file, and one outside the mirrored folders', () => {
    const root = tree([
      'proxy/server.ts',
      'test/proxy/server.test.ts',
      'test/proxy/fuzz.test.ts',
      'test/misc/x.test.ts',
    ])
    expect(check(root, {}).problems).toEqual([
      'test/misc/x.test.ts is outside the mirrored folders (test/proxy/, test/hooks/, test/plugins/, test/cli/)',
      'test/proxy/fuzz.test.ts names no source file (expected proxy/fuzz.ts)',
    ])
  })

  it('does not mirror test/clients (real client programs) or test/support (the fake upstream)', () => {
    const root = tree(['test/clients/claude-code.test.ts', 'test/support/fake-upstream.test.ts'])
    expect(check(root, {}).problems).toEqual([])
  })

  it('covers an example plugin folder by test/plugins/examples/<name>.test.ts', () => {
    const root = tree(['plugins/examples/long-context/index.js', 'plugins/examples/other/index.js'])
    fs.writeFileSync(path.join(root, 'x'), '')
    fs.mkdirSync(path.join(root, 'test/plugins/examples'), { recursive: true })
    fs.writeFileSync(path.join(root, 'test/plugins/examples/long-context.test.ts'), '')
    expect(check(root, {}).problems).toEqual([
      'plugins/examples/other/index.js has no test (expected test/plugins/examples/other.test.ts or test/plugins/examples/other.<topic>.test.ts)',
    ])
  })
})

describe('the list of files covered elsewhere', () => {
  it('is short, and every file on it exists and has no test of its own in this repository', () => {
    const names = Object.keys(COVERED_ELSEWHERE)
    expect(names.length).toBeLessThanOrEqual(MAX_EXEMPT)
    const root = path.join(__dirname, '..', '..')
    for (const n of names) expect(fs.existsSync(path.join(root, n))).toBe(true)
    const { covered } = check(root)
    for (const n of names) expect(covered.has(n)).toBe(false)
  })
})

describe('this repository', () => {
  it('has a mirrored test for every source file and no orphan test', () => {
    expect(check(path.join(__dirname, '..', '..')).problems).toEqual([])
  })
})
