/** docs/tools.md publishes the `clients` tool's definition; it is the one the code serves. */
import fs from 'node:fs'
import path from 'node:path'
import { anthropic } from '../../../proxy/dialects'
import { clientsToolDefinition } from '../../../proxy/tools/clients-tool'

describe('docs/tools.md', () => {
  it("publishes exactly the clients tool's anthropic definition", () => {
    const doc = fs.readFileSync(path.join(__dirname, '..', '..', '..', 'docs', 'tools.md'), 'utf8')
    const m = /<!-- clients-tool -->\s*```json\n([\s\S]*?)\n```/.exec(doc)
    expect(JSON.parse(m?.[1] ?? 'null')).toEqual(clientsToolDefinition(anthropic))
  })
})
