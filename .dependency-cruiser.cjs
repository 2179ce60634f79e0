/**
 * The import graph's rules, checked by `npm run check` (docs/architecture.md): no module imports
 * its way back into a circle, type-only imports included; the benches start the product one way
 * (the built `holdfast serve`, bench/procs), never through the test harness.
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
    {
      name: 'bench-not-harness',
      severity: 'error',
      comment:
        'A bench drives the built product (bench/procs: serveHome, startHoldfast), not the in-process test harness.',
      from: { path: '^bench/' },
      to: { path: '^test/support/harness' },
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
