/** The stored advertisement and the registration files: mapping, checks, rewrite-only-when-changed, sync. */
import fs from 'node:fs'
import path from 'node:path'
import {
  advertisementPath,
  mapAdvertisement,
  readAdvertisement,
  storeAdvertisement,
} from '../../../proxy/tools/advertisement'
import { isRegistered, registeredWorkspaces, syncRegistrations } from '../../../proxy/tools/registration'
import { configWith, stdioClient, tempDir } from './support'

let home: string
beforeEach(() => {
  home = tempDir()
})
afterEach(() => fs.rmSync(home, { recursive: true, force: true }))

describe('mapping an MCP tools/list', () => {
  it('maps inputSchema to input_schema and a missing description to ""', () => {
    expect(mapAdvertisement([{ name: 'a', inputSchema: { type: 'object' } }])).toEqual({
      tools: [{ name: 'a', description: '', input_schema: { type: 'object' } }],
      rejected: [],
    })
  })

  it('rejects a name that is not a path component and every copy of a repeated name, keeping the rest', () => {
    const ad = mapAdvertisement([
      { name: 'ok', description: 'fine', inputSchema: { type: 'object' } },
      { name: 'a/b', inputSchema: { type: 'object' } },
      { name: 'twin', inputSchema: { type: 'object' } },
      { name: 'twin', inputSchema: { type: 'object' } },
    ])
    expect(ad.tools.map((t) => t.name)).toEqual(['ok'])
    expect(ad.rejected.map((r) => r.name)).toEqual(['a/b', 'twin'])
    expect(ad.rejected[1]?.why).toMatch(/advertised 2 times/)
  })
})

describe('the stored advertisement', () => {
  const ad = mapAdvertisement([{ name: 'a', description: 'x', inputSchema: { type: 'object' } }])

  it('is rewritten only when it changed', async () => {
    const first = await storeAdvertisement(home, 'fx', ad, new Date('2026-01-01T00:00:00Z'))
    const ino = fs.statSync(advertisementPath(home, 'fx')).ino
    const again = await storeAdvertisement(home, 'fx', ad, new Date('2026-01-02T00:00:00Z'))
    expect(again.observed_at).toBe('2026-01-01T00:00:00.000Z')
    expect(fs.statSync(advertisementPath(home, 'fx')).ino).toBe(ino)
    const changed = mapAdvertisement([{ name: 'b', inputSchema: { type: 'object' } }])
    const third = await storeAdvertisement(home, 'fx', changed, new Date('2026-01-03T00:00:00Z'))
    expect([first.tools[0]?.name, third.tools[0]?.name, third.observed_at]).toEqual([
      'a',
      'b',
      '2026-01-03T00:00:00.000Z',
    ])
    expect(readAdvertisement(home, 'fx')).toEqual(third)
  })

  it('reads as none when absent or malformed', () => {
    expect(readAdvertisement(home, 'fx')).toBeUndefined()
    fs.mkdirSync(path.dirname(advertisementPath(home, 'fx')), { recursive: true })
    fs.writeFileSync(advertisementPath(home, 'fx'), '{"observed_at": "x", "tools": [{"name": "a/b"}]}')
    expect(readAdvertisement(home, 'fx')).toBeUndefined()
  })
})

describe('registration files', () => {
  it('are exactly the YAML lists after a sync, for every client', async () => {
    await syncRegistrations(
      home,
      configWith({ fx: { ...stdioClient(), workspaces: ['a', 'b'] }, gone: stdioClient() }),
    )
    expect([
      registeredWorkspaces(home, 'fx'),
      isRegistered(home, 'fx', 'a'),
      isRegistered(home, 'gone', 'a'),
    ]).toEqual([['a', 'b'], true, false])
    await syncRegistrations(home, configWith({ fx: { ...stdioClient(), workspaces: ['b', 'c'] } }))
    expect(registeredWorkspaces(home, 'fx')).toEqual(['b', 'c'])
    expect(fs.readFileSync(path.join(home, 'clients', 'fx', 'workspaces', 'c'), 'utf8')).toBe('')
    expect(fs.existsSync(path.join(home, 'clients', 'gone', 'workspaces'))).toBe(false)
  })

  it('refuse a client or workspace name that is not usable, naming it', async () => {
    await expect(syncRegistrations(home, configWith({ 'a/b': stdioClient() }))).rejects.toThrow(
      /holdfast.yaml: clients: client name "a\/b" is not usable/,
    )
    await expect(
      syncRegistrations(home, configWith({ fx: { ...stdioClient(), workspaces: ['..'] } })),
    ).rejects.toThrow(/clients.fx.workspaces: workspace name "\.\." is not usable/)
    expect(isRegistered(home, 'fx', '..')).toBe(false)
  })
})
