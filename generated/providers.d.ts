/* Generated from schemas/providers.schema.json by scripts/gen-types.js. Do not edit; run npm run gen:types. */

/**
 * providers.yaml on a config/<name> branch of a workspace repository: roles, each a provider row of holdfast.yaml and a model.
 */
export interface ProvidersConfig {
  /**
   * Roles by name; a name is a path component. A request whose model (or x-holdfast-role header) names a role goes to that role's row with that role's model.
   */
  roles: {
    [k: string]: Role
  }
}
export interface Role {
  /**
   * A provider row declared in holdfast.yaml.
   */
  provider: string
  /**
   * The model id sent to that provider.
   */
  model: string
  /**
   * Fills the dialect's own max-tokens field when the client sent none.
   */
  max_output_tokens?: number
}
