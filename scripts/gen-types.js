#!/usr/bin/env node
'use strict'
// Generates generated/*.d.ts from schemas/*.schema.json (json-schema-to-typescript).
// `--check` exits 1 when a generated file is stale, so `npm run check` catches a schema edit
// that was not followed by `npm run gen:types`.
const fs = require('node:fs')
const path = require('node:path')
const { compile } = require('json-schema-to-typescript')

const root = path.join(__dirname, '..')
const schemas = path.join(root, 'schemas')
const out = path.join(root, 'generated')
const check = process.argv.includes('--check')

async function main() {
  let stale = 0
  for (const file of fs
    .readdirSync(schemas)
    .filter((f) => f.endsWith('.schema.json'))
    .sort()) {
    const schema = JSON.parse(fs.readFileSync(path.join(schemas, file), 'utf8'))
    const name = file.replace(/\.schema\.json$/, '')
    const ts = await compile(schema, schema.title ?? name, {
      bannerComment: `/* Generated from schemas/${file} by scripts/gen-types.js. Do not edit; run npm run gen:types. */`,
      additionalProperties: false,
      style: { semi: false, singleQuote: true, printWidth: 110 },
    })
    const target = path.join(out, `${name}.d.ts`)
    const current = fs.existsSync(target) ? fs.readFileSync(target, 'utf8') : undefined
    if (current === ts) continue
    if (check) {
      console.error(`stale: generated/${name}.d.ts does not match schemas/${file}; run npm run gen:types`)
      stale++
    } else {
      fs.mkdirSync(out, { recursive: true })
      fs.writeFileSync(target, ts)
      console.log(`wrote generated/${name}.d.ts`)
    }
  }
  process.exit(stale ? 1 : 0)
}
main().catch((err) => {
  console.error(err)
  process.exit(1)
})
