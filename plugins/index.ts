/**
 * The holdfast package entry: the plugin API for plugin authors (DESIGN §10). Everything a plugin
 * needs is here: `definePlugin`, `apiVersion`, the hook and exchange types, and, for tests,
 * `runPlugin` and `exchange`. The proxy itself runs from the `holdfast` command, not from here.
 */
export {
  apiVersion,
  definePlugin,
  HOOK_NAMES,
  type DeepReadonly,
  type DialectName,
  type Exchange,
  type ExchangeSummary,
  type FailureView,
  type Hooks,
  type IdentifyDecision,
  type Json,
  type JsonObject,
  type PluginContext,
  type PluginDefinition,
  type PluginLog,
  type RecordedStep,
  type RecordsView,
  type ResponseView,
  type RouteDecision,
  type RouteView,
} from './api'
export { exchange, type ExchangeInit } from './exchange'
export { runPlugin, type LogLine, type RunningPlugin } from './instance'
