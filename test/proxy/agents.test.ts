/** The previous record kept in memory per agent (proxy/agents): only what the hold reads, and the 1 h lifetime still seen. */
import fs from 'node:fs'
import path from 'node:path'
import { AgentState, slim } from '../../proxy/agents'
import { silentLogger } from '../../proxy/log'
import { parseRecord } from '../../proxy/core/record'
import { InlineCommitter } from '../../proxy/store/committer'
import { Workspace } from '../../proxy/store/workspace'
import { tempHome } from '../support/harness'

const messages = [
  { role: 'system', content: 's' },
  { role: 'user', content: 'head' },
  { role: 'assistant', content: 'a' },
  {
    role: 'user',
    content: [{ type: 'text', text: 'tail', cache_control: { type: 'ephemeral', ttl: '1h' } }],
  },
]

describe('the previous record kept per agent', () => {
  it('keeps the top-level fields, the system messages and the head, and drops the rest of the transcript', () => {
    const body = { model: 'm', tools: [{ name: 't' }], messages }
    expect(slim(body)).toEqual({ model: 'm', tools: [{ name: 't' }], messages: messages.slice(0, 2) })
    expect(slim({ model: 'm', messages: messages.slice(0, 1) }).messages).toHaveLength(1)
  })

  it('still knows the request asked for the 1 h cache lifetime when the marker was on a dropped message', async () => {
    const home = tempHome()
    const ws = new Workspace(home, 'w')
    const agent = new AgentState(ws, 'a', silentLogger(), new InlineCommitter())
    await agent.init()
    const dir = agent.stepDir(1)
    fs.mkdirSync(dir, { recursive: true })
    fs.writeFileSync(path.join(dir, 'request.json'), JSON.stringify({ model: 'm', messages }))
    const previous = agent.previous(2, parseRecord)
    expect(previous?.longTtl).toBe(true)
    expect((previous?.parsed.messages as unknown[]).length).toBe(2)
    fs.rmSync(home, { recursive: true, force: true })
  })
})
