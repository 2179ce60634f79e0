/* Generated from schemas/loaded-set.schema.json by scripts/gen-types.js. Do not edit; run npm run gen:types. */

/**
 * <home>/loaded/<ws>/<agent>.json: the tools one agent has loaded, frozen at the load act, sorted by presented name (<client>_<name>).
 */
export type LoadedSet = LoadedEntry[]

export interface LoadedEntry {
  /**
   * The tool host's name (a path component).
   */
  client: string
  tool: AdvertisedTool
}
export interface AdvertisedTool {
  /**
   * The name the client advertises (a path component).
   */
  name: string
  description: string
  /**
   * JSON Schema of the tool's input.
   */
  input_schema: {}
}
