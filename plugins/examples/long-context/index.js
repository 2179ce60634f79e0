// @ts-check
/**
 * long-context: a request of at least `threshold` approximate tokens goes to `role`; a shorter one
 * is left to the next plugin (or to the request itself). The tutorial in plugins/README.md.
 * Invariant: it decides only from `ex.summary` (computed once by holdfast), never re-parses the
 * body, and keeps no state. Plain CommonJS, so holdfast loads it without a build step.
 */
'use strict'

/** @type {import('holdfast').PluginDefinition<{ threshold: number, role: string }>} */
const longContext = {
  name: 'long-context',
  apiVersion: 1,
  optionsSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['role'],
    properties: {
      threshold: {
        type: 'integer',
        minimum: 1,
        default: 100000,
        description: 'Approximate tokens at or above which a request goes to `role`.',
      },
      role: {
        type: 'string',
        minLength: 1,
        description: 'The role (providers.yaml) that takes long requests.',
      },
    },
  },
  setup({ options }) {
    return {
      route(ex) {
        const tokens = ex.summary.approxTokens
        if (tokens < options.threshold) return undefined // the next plugin decides
        return { role: options.role, why: `~${tokens} tokens ≥ ${options.threshold}` }
      },
    }
  },
}

module.exports = longContext
