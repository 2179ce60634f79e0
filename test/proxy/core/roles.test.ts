/** Routing by role (core/roles): header first, then a model equal to a role name; honest refusals. */
import { routeByRole } from '../../../proxy/core/roles'

const rows = {
  anthropic: { dialect: 'anthropic' },
  openai: { dialect: 'openai' },
  fast: { dialect: 'anthropic' },
}
const roles = {
  reviewer: { provider: 'fast', model: 'claude-haiku-4-5', max_output_tokens: 2000 },
  'claude-sonnet-4-5': { provider: 'anthropic', model: 'claude-opus-4-5' },
  gpt: { provider: 'openai', model: 'gpt-5' },
  ghost: { provider: 'nowhere', model: 'm' },
}

describe('routing by role', () => {
  it('routes a model equal to a role name to that role', () => {
    expect(routeByRole(undefined, 'reviewer', roles, undefined, rows, 'anthropic')).toEqual({
      kind: 'role',
      role: 'reviewer',
      via: 'model',
      provider: 'fast',
      model: 'claude-haiku-4-5',
      maxOutputTokens: 2000,
    })
  })

  it('lets a role named like a real model id win over the model', () => {
    expect(routeByRole(undefined, 'claude-sonnet-4-5', roles, undefined, rows, 'anthropic')).toMatchObject({
      kind: 'role',
      model: 'claude-opus-4-5',
    })
  })

  it('prefers x-holdfast-role over the model', () => {
    expect(routeByRole('reviewer', 'claude-sonnet-4-5', roles, undefined, rows, 'anthropic')).toMatchObject({
      role: 'reviewer',
      via: 'header',
    })
  })

  it('leaves a model that names no role alone', () => {
    expect(routeByRole(undefined, 'claude-haiku-4-5', roles, undefined, rows, 'anthropic')).toEqual({
      kind: 'none',
    })
  })

  it('refuses an undeclared x-holdfast-role, listing the declared roles', () => {
    const r = routeByRole('critic', 'x', roles, undefined, rows, 'anthropic')
    expect(r).toMatchObject({ kind: 'refused', code: 'ROLE_NOT_DECLARED' })
    if (r.kind === 'refused') expect(r.message).toContain('claude-sonnet-4-5, ghost, gpt, reviewer')
  })

  it('refuses a role whose provider row holdfast.yaml does not declare, naming role and row', () => {
    const r = routeByRole(undefined, 'ghost', roles, undefined, rows, 'anthropic')
    expect(r).toMatchObject({ kind: 'refused', code: 'ROLE_ROW_MISSING' })
    if (r.kind === 'refused') expect(r.message).toMatch(/"ghost".*"nowhere"/)
  })

  it('refuses a role whose row speaks another dialect than the endpoint (no silent translation)', () => {
    expect(routeByRole(undefined, 'gpt', roles, undefined, rows, 'anthropic')).toMatchObject({
      kind: 'refused',
      code: 'ROLE_DIALECT_MISMATCH',
    })
  })

  it('refuses a header role when the config cannot be read, and lets a plain model through', () => {
    expect(routeByRole('reviewer', 'm', undefined, 'no lineage', rows, 'anthropic')).toMatchObject({
      code: 'CONFIG_UNRESOLVED',
    })
    expect(routeByRole(undefined, 'reviewer', undefined, 'no lineage', rows, 'anthropic')).toEqual({
      kind: 'none',
    })
  })
})
