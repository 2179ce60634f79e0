// Fixture for register.test.ts: type annotations that plain node cannot parse.
export const greet = (name: string): string => `hello ${name}`
export const made = (message: string): Error => new Error(message)
