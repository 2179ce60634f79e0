// Entry point: `node dist/cli/run.js …` (bin/holdfast.js) or, in tests, through the swc register hook.
import { main } from './main'

void main(process.argv)
