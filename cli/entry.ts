export {} // a module, not a script (isolatedModules)
// Entry point: `node dist/cli/entry.js …` (bin/holdfast.js) or, in tests, through the swc register hook.
// `holdfast statusline` skips the command program: Claude Code runs it after every message.
const argv = process.argv
if (argv[2] === 'statusline' && !argv.slice(3).some((a) => a === '--help' || a === '-h'))
  void import('./statusline').then((s) => s.main(argv.slice(3)))
else void import('./main').then((m) => m.main(argv))
