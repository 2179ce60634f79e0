/**
 * The built-in plugins, by name. Invariant: a built-in name shadows an installed package of the
 * same name; `claude-code` runs first unless holdfast.yaml lists it (DESIGN §10).
 */
import type { AnyPlugin } from '../instance'
import claudeCode from './claude-code'

export const BUILTINS: Readonly<Record<string, AnyPlugin>> = Object.freeze({ 'claude-code': claudeCode })
