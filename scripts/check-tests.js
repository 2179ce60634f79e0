#!/usr/bin/env node
/**
 * The test tree mirrors the source tree. Every source file under `proxy/`, `hooks/`, `plugins/` and
 * `cli/` has a test file at the same place under `test/`: `test/<dir>/<name>.test.ts` or
 * `test/<dir>/<name>.<topic>.test.ts` (an `index.ts` may also be tested as `test/<dir>.test.ts`),
 * or is named in COVERED_ELSEWHERE with the test that covers it. Every test file under those mirrored
 * folders names a source file the same way (no orphans). `test/clients/` (real client programs) and
 * `test/support/` (the fake upstream) test the whole and are not mirrored.
 *
 * Usage: node scripts/check-tests.js [--root DIR] [--list]
 * Exits 1 and prints one line per problem.
 */
'use strict'
const fs = require('node:fs')
const path = require('node:path')

const SOURCE_ROOTS = ['proxy', 'hooks', 'plugins', 'cli']
const UNMIRRORED = ['test/clients', 'test/support']

/** Source files with no test of their own, each with the test that covers it. At most ten. */
const COVERED_ELSEWHERE = {
  'proxy/core/dialect.ts':
    'types only (the Dialect interface); test/proxy/dialects/index.test.ts checks every dialect',
  'cli/entry.ts':
    'the entry point; every test that spawns the CLI (test/cli/main.startup.test.ts, test/cli/run.spawned.test.ts) runs through it',
  'proxy/record/commit/messages.ts':
    'types only (what the server and the commit worker say) and SCHEDULED; test/proxy/record/commit/committer.test.ts and worker.test.ts speak it',
  'plugins/builtin/index.ts':
    'the table of built-ins; test/plugins/builtin/claude-code.test.ts loads it by name',
}
const MAX_EXEMPT = 10

function walk(dir, out = []) {
  if (!fs.existsSync(dir)) return out
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (e.name === 'node_modules' || e.name.startsWith('.')) continue
    const p = path.join(dir, e.name)
    if (e.isDirectory()) walk(p, out)
    else out.push(p)
  }
  return out
}

/** The source file a test file names, as candidates relative to the root ('' when none can be). */
function sourcesNamedBy(testRel) {
  const rel = testRel.slice('test/'.length)
  const dir = path.posix.dirname(rel)
  const base = path.posix.basename(rel, '.test.ts')
  const parts = base.split('.')
  const out = []
  // <name>.test.ts and <name>.<topic...>.test.ts: the name is the first dot-free part
  const name = parts[0]
  out.push(path.posix.join(dir, `${name}.ts`))
  out.push(path.posix.join(dir, name, 'index.ts'))
  out.push(path.posix.join(dir, name, 'index.js')) // a JavaScript example plugin is a folder
  return out
}

function check(root, coveredElsewhere = COVERED_ELSEWHERE) {
  const problems = []
  const sources = SOURCE_ROOTS.flatMap((r) => walk(path.join(root, r)))
    .map((p) => path.relative(root, p).split(path.sep).join('/'))
    .filter(
      (p) => (p.endsWith('.ts') && !p.endsWith('.d.ts')) || /^plugins\/examples\/[^/]+\/index\.js$/.test(p),
    )
    .sort()
  const tests = walk(path.join(root, 'test'))
    .map((p) => path.relative(root, p).split(path.sep).join('/'))
    .filter((p) => p.endsWith('.test.ts'))
    .sort()

  const exempt = Object.keys(coveredElsewhere)
  if (exempt.length > MAX_EXEMPT) {
    problems.push(`COVERED_ELSEWHERE names ${exempt.length} files; keep it to ${MAX_EXEMPT}`)
  }
  for (const f of exempt) {
    if (!sources.includes(f)) problems.push(`COVERED_ELSEWHERE names ${f}, which does not exist`)
  }

  const covered = new Map()
  for (const t of tests) {
    if (UNMIRRORED.some((u) => t.startsWith(u + '/'))) continue
    if (!SOURCE_ROOTS.some((r) => t.startsWith(`test/${r}/`))) {
      if (t.startsWith('test/scripts/')) {
        const name = path.posix.basename(t).split('.')[0]
        if (!fs.existsSync(path.join(root, 'scripts', `${name}.js`))) {
          problems.push(`${t} names no file in scripts/ (expected scripts/${name}.js)`)
        }
        continue
      }
      problems.push(
        `${t} is outside the mirrored folders (${SOURCE_ROOTS.map((r) => `test/${r}/`).join(', ')})`,
      )
      continue
    }
    const named = sourcesNamedBy(t).filter((s) => sources.includes(s))
    if (named.length === 0) {
      problems.push(`${t} names no source file (expected ${sourcesNamedBy(t)[0]})`)
      continue
    }
    for (const s of named) covered.set(s, [...(covered.get(s) ?? []), t])
  }
  for (const s of sources) {
    if (covered.has(s)) {
      if (s in coveredElsewhere) problems.push(`${s} has its own test; remove it from COVERED_ELSEWHERE`)
      continue
    }
    if (s in coveredElsewhere) continue
    const want = `test/${s.endsWith('/index.js') ? s.replace(/\/index\.js$/, '.test.ts') : s.replace(/\.ts$/, '.test.ts')}`
    problems.push(`${s} has no test (expected ${want} or ${want.replace(/\.test\.ts$/, '.<topic>.test.ts')})`)
  }
  return { problems, sources, tests, covered }
}

module.exports = { check, sourcesNamedBy, COVERED_ELSEWHERE, MAX_EXEMPT }

if (require.main === module) {
  const args = process.argv.slice(2)
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(
      'usage: node scripts/check-tests.js [--root DIR] [--list]\n' +
        'Checks that every source file under proxy/, hooks/, plugins/, cli/ has a mirrored test file\n' +
        'and that every test file there names a source file. --list prints what covers each file.\n',
    )
    process.exit(0)
  }
  const i = args.indexOf('--root')
  const root = path.resolve(i >= 0 ? args[i + 1] : path.join(__dirname, '..'))
  const { problems, sources, covered } = check(root)
  if (args.includes('--list')) {
    for (const s of sources) {
      process.stdout.write(`${s}\t${(covered.get(s) ?? [COVERED_ELSEWHERE[s] ?? '-']).join(', ')}\n`)
    }
  }
  for (const p of problems) process.stderr.write(`check-tests: ${p}\n`)
  if (problems.length > 0) {
    process.stderr.write(`check-tests: ${problems.length} problem(s)\n`)
    process.exit(1)
  }
  process.stdout.write(`check-tests: ${sources.length} source files, each with its test\n`)
}
