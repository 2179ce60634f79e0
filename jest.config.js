/** jest: @swc/jest transforms TypeScript (no type-check here; `npm test` runs tsc --noEmit first). */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } },
    ],
  },
  testTimeout: 60000, // room for two loaded cores: a spawned CLI (swc hook) starts in 1–5 s there
  // Two workers on two cores: most suites wait on sockets, git and child processes (99 s vs 169 s).
  maxWorkers: 2,
}
