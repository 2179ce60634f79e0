/**
 * Routing by role (DESIGN §8): `x-holdfast-role` first, then a `model` equal to a declared role
 * name (a role named like a real model id wins). Pure: the roles, the provider rows and the
 * endpoint's dialect in; a route or a refusal (code + sentence) out. No role involved → `none`.
 */
import type { ErrorCode } from './errors'

export interface RoleDecl {
  provider: string
  model: string
  max_output_tokens?: number
}
export interface RowDecl {
  dialect: string
}

export type RoleRoute =
  | { kind: 'none' }
  | {
      kind: 'role'
      role: string
      via: 'header' | 'model'
      provider: string
      model: string
      maxOutputTokens?: number
    }
export type RoleRefusal = { kind: 'refused'; code: ErrorCode; message: string }

/**
 * `roles` undefined means the followed config could not be read (`why` says why): a request
 * that names a role by header is then refused; one that only names a model goes on unrouted.
 */
export function routeByRole(
  header: string | undefined,
  model: unknown,
  roles: Readonly<Record<string, RoleDecl>> | undefined,
  why: string | undefined,
  rows: Readonly<Record<string, RowDecl>>,
  dialect: string,
): RoleRoute | RoleRefusal {
  let name: string
  let via: 'header' | 'model'
  if (header !== undefined) {
    if (!roles) {
      return {
        kind: 'refused',
        code: 'CONFIG_UNRESOLVED',
        message: `x-holdfast-role "${header}" cannot be resolved: ${why ?? 'no config'}`,
      }
    }
    if (!Object.hasOwn(roles, header)) {
      const declared = Object.keys(roles).sort()
      return {
        kind: 'refused',
        code: 'ROLE_NOT_DECLARED',
        message: `x-holdfast-role "${header}" is not declared in the followed config; declared roles: ${declared.length ? declared.join(', ') : 'none'}`,
      }
    }
    name = header
    via = 'header'
  } else if (typeof model === 'string' && roles && Object.hasOwn(roles, model)) {
    name = model
    via = 'model'
  } else return { kind: 'none' }
  const role = roles[name] as RoleDecl
  const row = rows[role.provider]
  if (!row) {
    return {
      kind: 'refused',
      code: 'ROLE_ROW_MISSING',
      message: `role "${name}" routes to provider row "${role.provider}", which holdfast.yaml does not declare`,
    }
  }
  if (row.dialect !== dialect) {
    return {
      kind: 'refused',
      code: 'ROLE_DIALECT_MISMATCH',
      message: `role "${name}" routes to provider row "${role.provider}", which speaks ${row.dialect}; this endpoint speaks ${dialect} (holdfast does not translate)`,
    }
  }
  return {
    kind: 'role',
    role: name,
    via,
    provider: role.provider,
    model: role.model,
    ...(role.max_output_tokens !== undefined ? { maxOutputTokens: role.max_output_tokens } : {}),
  }
}
