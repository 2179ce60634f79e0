#!/usr/bin/env node
'use strict'
// The `holdfast` command: the compiled CLI (built by `npm run build`, which `npm ci` runs on prepare).
require('../dist/cli/entry.js')
