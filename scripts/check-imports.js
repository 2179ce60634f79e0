#!/usr/bin/env node
/**
 * The import graph's check (`npm run check:imports`): dependency-cruiser with this repository's
 * .dependency-cruiser.cjs (no circle, the floors, git through its face) over the folders that hold
 * code, run in `--root` (default: this repository; a test points it at a scratch tree). Exits as
 * depcruise does: non-zero on any error-severity violation. The folders a root lacks are skipped.
 *
 * Usage: node scripts/check-imports.js [--root DIR]
 */
'use strict'
const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')

const REPO = path.join(__dirname, '..')
const FOLDERS = ['proxy', 'cli', 'hooks', 'plugins', 'bench', 'scripts', 'test']

function checkImports(root) {
  const folders = FOLDERS.filter((f) => fs.existsSync(path.join(root, f)))
  const bin = path.join(REPO, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs')
  const config = path.join(REPO, '.dependency-cruiser.cjs')
  return spawnSync(process.execPath, [bin, '--config', config, ...folders], {
    cwd: root,
    encoding: 'utf8',
  })
}

module.exports = { checkImports, FOLDERS }

if (require.main === module) {
  const args = process.argv.slice(2)
  const i = args.indexOf('--root')
  const r = checkImports(path.resolve(i >= 0 ? args[i + 1] : REPO))
  process.stdout.write(r.stdout ?? '')
  process.stderr.write(r.stderr ?? '')
  if (r.error) throw r.error
  process.exit(r.status ?? 1)
}
