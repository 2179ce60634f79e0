#!/usr/bin/env node
/**
 * Measured figures live in docs (docs/performance.md, docs/benchmarks.md, with the command that
 * produced them), never in code comments, where they go stale unseen. This check reads every
 * comment in the product's sources (`proxy/`, `hooks/`, `plugins/`, `cli/`) and refuses a number
 * with a unit of time, size or ratio (`12 ms`, `1.5 MB`, `4.3×`) unless ALLOWED names that exact
 * phrase in that file: a setting's default or a spec's limit is a fact of the code, not a measurement.
 *
 * Usage: node scripts/check-figures.js [--root DIR]
 * Exits 1 and prints one line per figure found.
 */
'use strict'
const fs = require('node:fs')
const path = require('node:path')

const SOURCE_ROOTS = ['proxy', 'hooks', 'plugins', 'cli']

/** file → phrases that are not measurements (a default, a limit, a format's constant). */
const ALLOWED = {
  'proxy/core/why.ts': ['2 ×'], // a line's length in terms of a constant
  'proxy/store/git/merge.ts': ['2 GiB'], // isomorphic-git's limit on a pack offset
  'proxy/store/git/pack-entry.ts': ['32 KB'], // deflate's window
  'proxy/store/git/refs.ts': ['130 ms'], // the sum of the default backoff
  'proxy/view/form.ts': ['256 KB'], // the form limit, a setting
  'proxy/view/html.ts': ['840 ms'], // a format's example
}

/** A number with a unit of time, size or ratio. */
const FIGURE = /(?<![\w.])\d[\d,]*(?:\.\d+)?\s?(?:ms|µs|us|ns|s of CPU|KB|MB|GB|KiB|MiB|GiB|×)(?![\w])/g

function walk(dir, out = []) {
  if (!fs.existsSync(dir)) return out
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (e.name === 'node_modules' || e.name.startsWith('.')) continue
    const p = path.join(dir, e.name)
    if (e.isDirectory()) walk(p, out)
    else if (/\.(ts|js|cjs|mjs)$/.test(e.name) && !e.name.endsWith('.d.ts')) out.push(p)
  }
  return out
}

/** Every comment of a source text with the line it starts on: `// …` and `/* … *\/`, strings skipped. */
function comments(text) {
  const out = []
  let line = 1
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (c === '\n') line++
    else if (c === '"' || c === "'" || c === '`') {
      for (i++; i < text.length && text[i] !== c; i++) {
        if (text[i] === '\\') i++
        else if (text[i] === '\n') {
          line++
          if (c !== '`') break
        }
      }
    } else if (c === '/' && text[i + 1] === '/') {
      const end = text.indexOf('\n', i)
      const stop = end < 0 ? text.length : end
      out.push({ line, text: text.slice(i + 2, stop) })
      i = stop - 1
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2)
      const stop = end < 0 ? text.length : end
      const body = text.slice(i + 2, stop)
      out.push({ line, text: body })
      line += (body.match(/\n/g) || []).length
      i = stop + 1
    }
  }
  return out
}

/** The figures in one file's comments that ALLOWED does not name. */
function figuresIn(rel, text, allowed = ALLOWED) {
  const ok = allowed[rel] ?? []
  const found = []
  for (const c of comments(text)) {
    const lines = c.text.split('\n')
    lines.forEach((l, k) => {
      for (const m of l.matchAll(FIGURE)) {
        if (ok.some((phrase) => l.includes(phrase) && phrase.includes(m[0]))) continue
        found.push({ file: rel, line: c.line + k, figure: m[0], text: l.trim() })
      }
    })
  }
  return found
}

function check(root, allowed = ALLOWED) {
  const out = []
  for (const r of SOURCE_ROOTS)
    for (const p of walk(path.join(root, r))) {
      const rel = path.relative(root, p).split(path.sep).join('/')
      out.push(...figuresIn(rel, fs.readFileSync(p, 'utf8'), allowed))
    }
  return out
}

module.exports = { check, comments, figuresIn, FIGURE }

if (require.main === module) {
  const args = process.argv.slice(2)
  const i = args.indexOf('--root')
  const root = path.resolve(i >= 0 ? args[i + 1] : path.join(__dirname, '..'))
  const found = check(root)
  for (const f of found)
    console.log(
      `check-figures: ${f.file}:${f.line}: "${f.figure}" in a comment (${f.text}); move it to docs/performance.md`,
    )
  if (found.length) {
    console.log(`check-figures: ${found.length} figure(s) in code comments`)
    process.exit(1)
  }
  console.log('check-figures: no measured figures in code comments')
}
