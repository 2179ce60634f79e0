/**
 * The commit worker: a worker thread that turns journal steps into commits, so zlib, SHA-1 and
 * the object writes never run on the thread that serves requests. Invariant: it only does what
 * it is asked (one step, one commit) and answers every message, with the commit id or the error.
 */
import { parentPort } from 'node:worker_threads'
import { useSyncFs } from './git-repo'
import { maintain } from './git-run'
import { pruneJournal } from './journal'
import { Workspace } from './workspace'

export type CommitRequest =
  | { kind: 'commit'; id: number; home: string; ws: string; agent: string; n: number; model: string | null }
  | { kind: 'maintain'; id: number; home: string; ws: string }
export type CommitReply =
  { id: number; oid: string } | { id: number; error: { name: string; message: string } }

/** Commit a step, then drop committed journal steps but the latest (the next hold reads it). */
async function commitAndPrune(
  ws: Workspace,
  agent: string,
  n: number,
  model: string | null,
): Promise<string> {
  const oid = await ws.commitStep(agent, n, model)
  await pruneJournal(ws.agentJournal(agent), n)
  return oid
}

if (parentPort) {
  const port = parentPort
  useSyncFs()
  const workspaces = new Map<string, { ws: Workspace; queue: Promise<unknown> }>()
  port.on('message', (m: CommitRequest) => {
    const key = `${m.home}\0${m.ws}`
    let w = workspaces.get(key)
    if (!w) workspaces.set(key, (w = { ws: new Workspace(m.home, m.ws), queue: Promise.resolve() }))
    const ws = w.ws
    // One job at a time per workspace, so `git gc` never runs beside a commit of its repository.
    const job = w.queue.then(() =>
      m.kind === 'commit'
        ? commitAndPrune(ws, m.agent, m.n, m.model)
        : maintain(ws.repo.gitdir).then(() => ''),
    )
    w.queue = job.catch(() => undefined)
    job.then(
      (oid) => port.postMessage({ id: m.id, oid } satisfies CommitReply),
      (err: unknown) =>
        port.postMessage({
          id: m.id,
          error: { name: (err as Error)?.name ?? 'Error', message: (err as Error)?.message ?? String(err) },
        } satisfies CommitReply),
    )
  })
}
