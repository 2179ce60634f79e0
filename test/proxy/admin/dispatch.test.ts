/**
 * proxy/admin/dispatch: `POST /_holdfast/dispatch {argv}` on a running proxy. Rules: only POST;
 * argv must be an array of strings (BAD_JSON otherwise); an argv that does not parse answers 200
 * `exit: 2` with the usage sentence and logs nothing; a refused dispatch answers 200 `exit: 1`,
 * `child: null`, with the sentence on stderr, is logged with origin `http`, and leaves nothing
 * behind. (A dispatch that goes through is covered by test/proxy/attempts/fire.test.ts.)
 */
import fs from 'node:fs'
import path from 'node:path'
import { readOps } from '../../../proxy/store/ops-log'
import { startProxy, type Proxy } from '../../support/harness'
import { listTree } from '../../support/raw-http'

let p: Proxy
beforeAll(async () => {
  p = await startProxy()
})
afterAll(() => p.close())

const post = (body: string) =>
  fetch(`${p.url}/_holdfast/dispatch`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  })

interface Answer {
  child: string | null
  exit: number
  stdout: string
  stderr: string
}

const dispatch = async (argv: string[]): Promise<Answer> => {
  const r = await post(JSON.stringify({ argv }))
  expect(r.status).toBe(200)
  return (await r.json()) as Answer
}

describe('POST /_holdfast/dispatch', () => {
  it('answers any other method NOT_FOUND with the endpoint’s usage', async () => {
    for (const method of ['GET', 'DELETE']) {
      const r = await fetch(`${p.url}/_holdfast/dispatch`, { method })
      expect(r.status).toBe(404)
      expect(await r.json()).toEqual({
        error: { code: 'NOT_FOUND', message: 'POST /_holdfast/dispatch {argv: [...]}' },
      })
    }
  })

  it('refuses an argv that is not an array of strings as BAD_JSON, showing the shape', async () => {
    for (const body of [{}, { argv: 'dispatch reviewer default main' }, { argv: ['dispatch', 3] }]) {
      const r = await post(JSON.stringify(body))
      expect(r.status).toBe(400)
      const e = ((await r.json()) as { error: { code: string; message: string } }).error
      expect(e.code).toBe('BAD_JSON')
      expect(e.message).toMatch(/^argv must be an array of strings: \["dispatch", role, ws, parent, "--goal"/)
    }
    const notJson = await post('{"argv": [')
    expect([notJson.status, notJson.headers.get('x-holdfast-error')]).toEqual([400, 'BAD_JSON'])
  })

  it('answers exit 2 with the usage sentence for an argv that does not parse, and logs nothing', async () => {
    const before = readOps(p.home).length
    expect(await dispatch(['dispatch', 'reviewer', 'default'])).toEqual({
      child: null,
      exit: 2,
      stdout: '',
      stderr: 'holdfast: dispatch takes <role> <ws> <parent>\n',
    })
    expect(
      (await dispatch(['reviewer', 'default', 'main', '--goal', 'g', '--from', 'x', '--fast'])).stderr,
    ).toBe('holdfast: unknown option --fast\n')
    expect((await dispatch(['reviewer', 'default', 'main', '--from', 'main@001'])).stderr).toBe(
      'holdfast: the goal is empty: say what this attempt is for (--goal)\n',
    )
    expect(readOps(p.home)).toHaveLength(before)
  })

  it('answers exit 1 for a refused dispatch, logs it with origin http, and creates nothing', async () => {
    const before = listTree(path.join(p.home, 'workspaces'))
    const argv = ['dispatch', 'reviewer', 'nowhere', 'main', '--goal', 'look', '--from', 'main@001']
    const r = await dispatch(argv)
    expect(r).toEqual({
      child: null,
      exit: 1,
      stdout: '',
      stderr: expect.stringMatching(/^holdfast: no workspace "nowhere" in \S+\n$/),
    })
    expect(readOps(p.home).at(-1)).toMatchObject({ argv, exit: 1, origin: 'http', stderr: r.stderr })
    expect(listTree(path.join(p.home, 'workspaces'))).toEqual(before)
    expect(fs.existsSync(path.join(p.home, 'workspaces', 'nowhere'))).toBe(false)
  })
})
