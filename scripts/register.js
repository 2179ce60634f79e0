/**
 * A CommonJS require hook: `node -r ./scripts/register.js file.ts` runs TypeScript without a build.
 * Each `.ts` file outside node_modules is compiled by @swc/core (TypeScript syntax, es2022, CommonJS,
 * inline source maps, so stack traces point at .ts lines). Invariant: types are stripped, never checked.
 */
'use strict'
const path = require('node:path')
const { transformSync } = require('@swc/core')

const nodeModules = `${path.sep}node_modules${path.sep}`
const loadJs = require.extensions['.js']

process.setSourceMapsEnabled(true)

require.extensions['.ts'] = function compileTs(module, filename) {
  if (filename.includes(nodeModules)) return loadJs(module, filename)
  const source = require('node:fs').readFileSync(filename, 'utf8')
  const { code } = transformSync(source, {
    filename,
    swcrc: false,
    configFile: false,
    sourceMaps: 'inline',
    jsc: { target: 'es2022', parser: { syntax: 'typescript' } },
    module: { type: 'commonjs' },
  })
  module._compile(code, filename)
}
