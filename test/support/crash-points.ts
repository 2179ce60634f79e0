/**
 * A process killed (SIGKILL, by itself) at one named moment of writing or removing packs, for the
 * tests that start again after it: `node -r scripts/register.js test/support/crash-points.ts
 * <point> <home> <agents> <steps>` commits `<steps>` steps for each of `<agents>` (comma-separated)
 * into workspace `default` of `<home>`, one batch per step, then does what the point needs and
 * kills itself there. Points:
 * - `before-pack-rename`: the pack's temp file is whole, not renamed (a `tmp_pack_hf*` left);
 * - `between-renames`: the `.pack` has its name, its `.idx` does not yet (the last batch's pack);
 * - `removal-round`: a chain's replaced pack has lost its `.idx`, not yet its `.pack`;
 * - `merge-removal`: a merge's replaced pack has lost its `.idx`, not yet its `.pack` (give 0
 *   steps: the packs an earlier process wrote are merged, none of them an open chain here);
 * - `none`: no kill; the process exits 0 once everything is written and removed.
 * The kill is armed only for the last thing the point names, so everything before it is on the disk.
 */
import fs from 'node:fs'
import path from 'node:path'
import { commitSteps } from '../../proxy/record/commit/step-commits'
import { maintain, retired } from '../../proxy/store/git'
import { Workspace } from '../../proxy/store/workspace'

const [point, home, agentList, stepCount] = process.argv.slice(2) as [string, string, string, string]
const agents = agentList.split(',')
const steps = Number(stepCount)

const die = (): never => {
  process.kill(process.pid, 'SIGKILL')
  throw new Error('not killed')
}
const inPackDir = (file: unknown): boolean =>
  String(file).includes(`${path.sep}objects${path.sep}pack${path.sep}`)

/** Arm the kill: patch Node's fs so the named moment ends the process. */
function arm(): void {
  if (point === 'before-pack-rename' || point === 'between-renames') {
    const rename = fs.renameSync
    const target = point === 'before-pack-rename' ? '.pack' : '.idx'
    fs.renameSync = (from: fs.PathLike, to: fs.PathLike): void => {
      if (inPackDir(to) && String(to).endsWith(target)) die()
      rename(from, to)
    }
  } else if (point === 'removal-round') {
    const rm = fs.promises.rm
    fs.promises.rm = async (file: fs.PathLike, options?: fs.RmOptions): Promise<void> => {
      await rm(file, options)
      if (inPackDir(file) && String(file).endsWith('.idx')) die()
    }
  } else if (point === 'merge-removal') {
    const rm = fs.rmSync
    fs.rmSync = (file: fs.PathLike, options?: fs.RmOptions): void => {
      rm(file, options)
      if (inPackDir(file) && String(file).endsWith('.idx')) die()
    }
  }
}

const step = (agent: string, n: number) => ({
  agent,
  n,
  model: 'm',
  files: {
    'request.json': Buffer.from(JSON.stringify({ agent, n, text: `step ${n} of ${agent} `.repeat(4000) })),
    'meta.json': Buffer.from(JSON.stringify({ n })),
  },
})

async function main(): Promise<void> {
  // The removal round's timer holds no process open (the commit worker's port does): this does.
  const alive = setInterval(() => undefined, 1000)
  const ws = new Workspace(home, 'default')
  await ws.ensure()
  for (let n = 1; n <= steps; n++) {
    if (n === steps && (point === 'before-pack-rename' || point === 'between-renames')) arm()
    for (const agent of agents) {
      const done = await commitSteps(ws.repo, [step(agent, n)])
      if (done.failed.size > 0) throw [...done.failed.values()][0]
    }
  }
  if (point === 'removal-round') arm()
  await retired()
  if (point === 'merge-removal') {
    arm()
    await maintain(ws.repo.gitdir)
  }
  clearInterval(alive)
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${String((err as Error)?.stack ?? err)}\n`)
    process.exit(1)
  },
)
