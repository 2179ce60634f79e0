/**
 * A worker thread for test/proxy/thread-priority.test.ts: lowers itself as asked (workerData: the
 * nice values to ask for, in order) and posts what each call returned.
 */
import { parentPort, workerData } from 'node:worker_threads'
import { lowerThisThread } from '../../proxy/thread-priority'

parentPort?.postMessage((workerData as number[]).map((nice) => lowerThisThread(nice) ?? null))
