import { performance } from 'node:perf_hooks'
import fs from 'node:fs'
import { startFakeUpstream } from './support/fake-upstream'
import { startProxy } from './support/harness'
import { mainStep, sendStep } from './support/view-demo'
import { stepRecords } from '../proxy/report/steps'
import { listSteps } from '../proxy/record/read'
import { agentData, agentBody } from '../proxy/view/pages/agent'
import { serverLinks } from '../proxy/view/links'
;(async () => {
  const fake = await startFakeUpstream()
  const p = await startProxy({ fake })
  for (let i = 1; i <= 400; i++) await sendStep(p, 'bench', 'main', mainStep(Math.min(i, 40), ['Read']))
  await p.settled()
  console.log('packs', fs.readdirSync(p.repo('bench') + '/objects/pack').length)
  const ws = p.server.ctx.workspace('bench')
  for (let k = 0; k < 3; k++) {
    let t = performance.now(); await listSteps(ws, 'main'); const a = performance.now() - t
    t = performance.now(); await stepRecords(ws, 'main'); const b = performance.now() - t
    t = performance.now(); const d = await agentData(ws, 'main'); const c = performance.now() - t
    t = performance.now(); agentBody(d, serverLinks); const e = performance.now() - t
    console.log({ listSteps: a.toFixed(0), stepRecords: b.toFixed(0), agentData: c.toFixed(0), render: e.toFixed(0) })
  }
  await p.close(); await fake.close()
})()
