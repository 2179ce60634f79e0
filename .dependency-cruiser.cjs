/**
 * The import graph's rules, checked by `npm run check` (docs/architecture.md): no module imports
 * its way back into a circle, type-only imports included; the product stands on floors (DESIGN
 * §13, "Layout"; ../shared/STYLE.md "A layout that shows the architecture") and no import runs
 * back up them; git code is reached through `proxy/store/git/index.ts` only; the benches start the
 * product one way (the built `holdfast serve`, bench/procs), never through the test harness.
 * test/scripts/check-imports.test.ts proves each floor rule fails an upward import.
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
      name: 'core-floor',
      severity: 'error',
      comment:
        "core/ is the ground floor: pure rules and the ports the edges implement; of this project's code it stands on core/ and generated/ only (libraries and node's own modules aside).",
      from: { path: '^proxy/core/' },
      to: {
        path: '^(?!proxy/core/|generated/)',
        pathNot: '(^|/)node_modules/',
        dependencyTypesNot: ['core'],
      },
    },
    {
      name: 'store-floor',
      severity: 'error',
      comment:
        'store/ (git objects and refs, config files, loaded sets) stands below the record and everything above it: pass what it needs in (an edge, a narrower type).',
      from: { path: '^proxy/store/' },
      to: { path: '^proxy/(record|stages|view|report|remote|admin|attempts|live)/|^hooks/' },
    },
    {
      name: 'record-floor',
      severity: 'error',
      comment:
        'record/ (journal, commit, recover) stands below the stages, the view, the reports, the live state, admin, attempts and the remote: give it a narrow type of its own instead.',
      from: { path: '^proxy/record/' },
      to: { path: '^proxy/(stages|view|report|live|admin|attempts|remote)/' },
    },
    {
      name: 'view-reads-through-report',
      severity: 'error',
      comment: 'The view reads records through report/ only: not record/, not store/git/.',
      from: { path: '^proxy/view/' },
      to: { path: '^proxy/(record|store/git)/' },
    },
    {
      name: 'proxy-below-cli-and-hooks',
      severity: 'error',
      comment: 'proxy/ offers; cli/ and hooks/ call it. Nothing in proxy/ imports them.',
      from: { path: '^proxy/' },
      to: { path: '^(hooks|cli)/' },
    },
    {
      name: 'git-through-its-face',
      severity: 'error',
      comment:
        "Code outside store/git/ imports git code from proxy/store/git/index.ts only (isomorphic-git's src/index.js: callers never reach behind it). Re-export what is needed there.",
      from: { path: '^(proxy|cli|hooks|plugins)/', pathNot: '^proxy/store/git/' },
      to: { path: '^proxy/store/git/(?!index\\.ts$)' },
    },
    {
      name: 'one-way-to-spawn',
      severity: 'error',
      comment:
        'Children start in proxy/process/spawn.ts only (what they inherit is decided there; simple-git for the rare git commands through store/git/run.ts).',
      from: { path: '^(proxy|cli|hooks|plugins)/', pathNot: '^proxy/process/spawn\\.ts$' },
      to: { path: '^(node:)?child_process$' },
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
