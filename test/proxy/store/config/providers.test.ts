/** providers.yaml validation (store/config/providers): errors name the file, the role and the key. */
import { parseProviders, renderProviders } from '../../../../proxy/store/config/providers'

const rows = { anthropic: { dialect: 'anthropic' as const, base_url: 'https://api.anthropic.com' } }
const bad = (text: string): string => {
  const r = parseProviders(text, 'providers.yaml', rows)
  if (r.ok) throw new Error('expected a refusal')
  return r.error
}

describe('providers.yaml', () => {
  it('accepts roles naming declared rows', () => {
    const r = parseProviders(
      'roles:\n  reviewer: {provider: anthropic, model: m, max_output_tokens: 100}\n',
      'p',
      rows,
    )
    expect(r).toEqual({
      ok: true,
      value: { roles: { reviewer: { provider: 'anthropic', model: 'm', max_output_tokens: 100 } } },
    })
  })

  it('refuses an unknown key, naming the role and the key', () => {
    expect(bad('roles:\n  reviewer: {provider: anthropic, modle: m}\n')).toBe(
      'providers.yaml: roles.reviewer: unknown key "modle"',
    )
  })

  it('refuses a missing field, naming the role and the key', () => {
    expect(bad('roles:\n  reviewer: {provider: anthropic}\n')).toBe(
      'providers.yaml: roles.reviewer: missing key "model"',
    )
  })

  it('refuses a provider row holdfast.yaml does not declare, naming role and row', () => {
    expect(bad('roles:\n  reviewer: {provider: anthropc, model: m}\n')).toMatch(
      /^providers\.yaml: roles\.reviewer\.provider: "anthropc" is not a provider row in holdfast\.yaml \(declared: anthropic\)$/,
    )
  })

  it('refuses a role name that is not a path component', () => {
    expect(bad('roles:\n  "a/b": {provider: anthropic, model: m}\n')).toMatch(
      /role name "a\/b" is not usable/,
    )
  })

  it('refuses YAML that does not parse, and an empty file', () => {
    expect(bad('roles: [\n')).toMatch(/^providers\.yaml: not valid YAML/)
    expect(bad('')).toMatch(/^providers\.yaml: /)
  })

  it('accepts any row when read without rows (the proxy refuses only the request that uses it)', () => {
    expect(parseProviders('roles:\n  r: {provider: nowhere, model: m}\n', 'p').ok).toBe(true)
  })

  it('renders roles that parse back to the same roles', () => {
    const config = {
      roles: {
        b: { provider: 'anthropic', model: 'y' },
        a: { provider: 'anthropic', model: 'x', max_output_tokens: 5 },
      },
    }
    const back = parseProviders(renderProviders(config), 'p', rows)
    expect(back).toEqual({ ok: true, value: config })
    expect(renderProviders({ roles: {} })).toContain('roles: {}')
  })
})
