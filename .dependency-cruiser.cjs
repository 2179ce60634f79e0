/**
 * The import graph's one rule, checked by `npm run check` (docs/architecture.md: no module imports
 * its way back into a circle, type-only imports included).
 */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A circle of imports (type-only ones count): break it with a narrower module or a handle.',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    // Type-only imports are dependencies too: a circle through types is still a circle.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist|generated|coverage)/' },
  },
}
