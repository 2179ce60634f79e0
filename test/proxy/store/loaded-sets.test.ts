import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { HoldfastError } from '../../../proxy/core/errors'
import type { LoadedEntry } from '../../../proxy/core/loaded-set'
import { encodeLoadedSet, presentedName } from '../../../proxy/core/loaded-set'
import {
  addToLoadedSet,
  loadedSetPath,
  readLoadedSet,
  updateLoadedSet,
  writeLoadedSet,
} from '../../../proxy/store/loaded-sets'

function entry(client: string, name: string, description = `${name} tool`): LoadedEntry {
  return { client, tool: { name, description, input_schema: { type: 'object' } } }
}

let home: string
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'holdfast-loaded-'))
})
afterEach(() => {
  rmSync(home, { recursive: true, force: true })
})

function place(ws: string, agent: string, text: string): string {
  const file = loadedSetPath(home, ws, agent)
  if (file === undefined) throw new Error('test address must be usable')
  mkdirSync(join(home, 'loaded', ws), { recursive: true })
  writeFileSync(file, text)
  return file
}

describe('loadedSetPath', () => {
  it('is <home>/loaded/<ws>/<agent>.json', () => {
    expect(loadedSetPath(home, 'proj', 'main')).toBe(join(home, 'loaded', 'proj', 'main.json'))
  })

  it.each([
    ['', 'main'],
    ['.', 'main'],
    ['..', 'main'],
    ['a/b', 'main'],
    ['proj', '..'],
    ['proj', 'a\\b'],
    ['proj', 'a\0b'],
    ['proj', ''],
  ])('is undefined for workspace %j and agent %j', (ws, agent) => {
    expect(loadedSetPath(home, ws, agent)).toBeUndefined()
  })
})

describe('readLoadedSet', () => {
  it('reads an absent file as the empty set', () => {
    expect(readLoadedSet(home, 'proj', 'main')).toEqual([])
  })

  it('reads a directory in place of the file as the empty set', () => {
    mkdirSync(join(home, 'loaded', 'proj', 'main.json'), { recursive: true })
    expect(readLoadedSet(home, 'proj', 'main')).toEqual([])
  })

  it('reads a file that is not JSON as the empty set', () => {
    place('proj', 'main', '[{"client": "a", ')
    expect(readLoadedSet(home, 'proj', 'main')).toEqual([])
  })

  it('reads JSON that does not decode as a loaded set as the empty set', () => {
    place('proj', 'main', JSON.stringify([{ client: 'a', tool: { name: 'x', description: '' } }]))
    expect(readLoadedSet(home, 'proj', 'main')).toEqual([])
  })

  it('reads an unusable address as the empty set without touching the disk', () => {
    expect(readLoadedSet(home, '..', 'main')).toEqual([])
    expect(readLoadedSet(home, 'proj', 'a/b')).toEqual([])
  })

  it('reads a stored set in stored order', () => {
    const set = [entry('a', 'x'), entry('b', 'y', '')]
    place('proj', 'main', JSON.stringify(encodeLoadedSet(set)))
    expect(readLoadedSet(home, 'proj', 'main')).toEqual(set)
  })

  it('sees a rewrite of the file by another writer', () => {
    const file = place('proj', 'main', JSON.stringify(encodeLoadedSet([entry('a', 'x')])))
    const before = new Date('2020-01-01T00:00:00Z')
    utimesSync(file, before, before)
    expect(readLoadedSet(home, 'proj', 'main').map(presentedName)).toEqual(['a_x'])
    // Rewritten in place with the same size, inode and mtime: only the content and ctime move.
    writeFileSync(file, JSON.stringify(encodeLoadedSet([entry('a', 'y')])))
    utimesSync(file, before, before)
    expect(readLoadedSet(home, 'proj', 'main').map(presentedName)).toEqual(['a_y'])
  })

  it('sees a file replaced by a malformed one', () => {
    const file = place('proj', 'main', JSON.stringify(encodeLoadedSet([entry('a', 'x')])))
    expect(readLoadedSet(home, 'proj', 'main')).toHaveLength(1)
    writeFileSync(file, 'not json at all')
    expect(readLoadedSet(home, 'proj', 'main')).toEqual([])
  })

  it('sees a file that is removed', () => {
    const file = place('proj', 'main', JSON.stringify(encodeLoadedSet([entry('a', 'x')])))
    expect(readLoadedSet(home, 'proj', 'main')).toHaveLength(1)
    rmSync(file)
    expect(readLoadedSet(home, 'proj', 'main')).toEqual([])
  })

  it('hands out an array the caller may change without changing the next read', () => {
    place('proj', 'main', JSON.stringify(encodeLoadedSet([entry('a', 'x')])))
    readLoadedSet(home, 'proj', 'main')
    const first = readLoadedSet(home, 'proj', 'main') // a cache hit
    first.push(entry('z', 'z'))
    first.reverse()
    expect(readLoadedSet(home, 'proj', 'main')).toEqual([entry('a', 'x')])
  })

  it('refuses a change to a cached entry or its schema', () => {
    place('proj', 'main', JSON.stringify(encodeLoadedSet([entry('a', 'x')])))
    const first = readLoadedSet(home, 'proj', 'main')[0]!
    expect(() => {
      first.tool.description = 'mutated'
    }).toThrow(TypeError)
    expect(() => {
      first.tool.input_schema.type = 'mutated'
    }).toThrow(TypeError)
    expect(readLoadedSet(home, 'proj', 'main')).toEqual([entry('a', 'x')])
  })

  it('keeps sets of different agents apart', () => {
    place('proj', 'main', JSON.stringify(encodeLoadedSet([entry('a', 'x')])))
    place('proj', 'side', JSON.stringify(encodeLoadedSet([entry('b', 'y')])))
    expect(readLoadedSet(home, 'proj', 'main').map(presentedName)).toEqual(['a_x'])
    expect(readLoadedSet(home, 'proj', 'side').map(presentedName)).toEqual(['b_y'])
  })
})

describe('addToLoadedSet', () => {
  it('writes the union and reads it back', async () => {
    const whole = await addToLoadedSet(home, 'proj', 'main', [entry('b', 'y'), entry('a', 'x')])
    expect(whole.map(presentedName)).toEqual(['a_x', 'b_y'])
    expect(readLoadedSet(home, 'proj', 'main')).toEqual(whole)
    const onDisk: unknown = JSON.parse(readFileSync(join(home, 'loaded', 'proj', 'main.json'), 'utf8'))
    expect(onDisk).toEqual(encodeLoadedSet(whole))
  })

  it('unions with what is loaded, later definition winning, sorted by presented name', async () => {
    await addToLoadedSet(home, 'proj', 'main', [entry('b', 'y'), entry('a', 'x', 'old')])
    const whole = await addToLoadedSet(home, 'proj', 'main', [entry('a', 'x', 'new'), entry('a', 'w')])
    expect(whole).toEqual([entry('a', 'w'), entry('a', 'x', 'new'), entry('b', 'y')])
    expect(readLoadedSet(home, 'proj', 'main')).toEqual(whole)
  })

  it('leaves no temp file beside the set', async () => {
    await addToLoadedSet(home, 'proj', 'main', [entry('a', 'x')])
    await addToLoadedSet(home, 'proj', 'main', [entry('a', 'y')])
    expect(readdirSync(join(home, 'loaded', 'proj'))).toEqual(['main.json'])
  })

  it('loses no entry when adds for one agent run concurrently', async () => {
    await Promise.all(
      Array.from({ length: 10 }, (_, i) => addToLoadedSet(home, 'proj', 'main', [entry('c', `t${i}`)])),
    )
    expect(readLoadedSet(home, 'proj', 'main')).toHaveLength(10)
  })

  it('replaces a malformed file with the added entries', async () => {
    place('proj', 'main', '{oops')
    expect(await addToLoadedSet(home, 'proj', 'main', [entry('a', 'x')])).toEqual([entry('a', 'x')])
    expect(readLoadedSet(home, 'proj', 'main')).toEqual([entry('a', 'x')])
  })

  it.each([
    ['..', 'main'],
    ['proj', 'a/b'],
    ['', 'main'],
  ])('rejects workspace %j and agent %j as an unusable address, creating nothing', async (ws, agent) => {
    const err: unknown = await addToLoadedSet(home, ws, agent, [entry('a', 'x')]).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(HoldfastError)
    expect((err as Error).message.startsWith('unusable address ')).toBe(true)
    expect((err as Error).message).toContain(`${JSON.stringify(ws)}/${JSON.stringify(agent)}`)
    expect(readdirSync(home)).toEqual([])
  })

  it('refuses to write an entry whose presented name is not callable, writing nothing', async () => {
    await expect(addToLoadedSet(home, 'proj', 'main', [entry('laptop.local', 'Bash')])).rejects.toThrow(
      'presented name "laptop.local_Bash" is not callable',
    )
    expect(existsSync(join(home, 'loaded'))).toBe(false)
  })
})

describe('writeLoadedSet', () => {
  it('replaces the set whole', async () => {
    await addToLoadedSet(home, 'proj', 'main', [entry('a', 'x'), entry('a', 'y')])
    await writeLoadedSet(home, 'proj', 'main', [entry('a', 'y')])
    expect(readLoadedSet(home, 'proj', 'main')).toEqual([entry('a', 'y')])
  })

  it('writes the empty set as []', async () => {
    await addToLoadedSet(home, 'proj', 'main', [entry('a', 'x')])
    await writeLoadedSet(home, 'proj', 'main', [])
    expect(JSON.parse(readFileSync(join(home, 'loaded', 'proj', 'main.json'), 'utf8'))).toEqual([])
    expect(readLoadedSet(home, 'proj', 'main')).toEqual([])
  })

  it('stores the set sorted by presented name', async () => {
    await writeLoadedSet(home, 'proj', 'main', [entry('b', 'x'), entry('a', 'x')])
    expect(readLoadedSet(home, 'proj', 'main').map(presentedName)).toEqual(['a_x', 'b_x'])
  })

  it('refuses two entries with one presented name', async () => {
    await expect(
      writeLoadedSet(home, 'proj', 'main', [entry('a', 'x'), entry('a', 'x', 'again')]),
    ).rejects.toThrow('repeats element 0')
  })

  it('rejects an unusable address, creating nothing', async () => {
    await expect(writeLoadedSet(home, 'proj', '.', [])).rejects.toThrow(/^unusable address "proj"\/"\."/)
    expect(readdirSync(home)).toEqual([])
  })
})

describe('updateLoadedSet', () => {
  it('reads, plans and writes as one act, so an unload never drops a load made meanwhile', async () => {
    await addToLoadedSet(home, 'proj', 'main', [entry('a', 'x')])
    const add = addToLoadedSet(home, 'proj', 'main', [entry('b', 'y')])
    const remove = updateLoadedSet(home, 'proj', 'main', (current) => ({
      ok: true,
      value: current.filter((e) => presentedName(e) !== 'a_x'),
    }))
    await Promise.all([add, remove])
    expect(readLoadedSet(home, 'proj', 'main').map(presentedName)).toEqual(['b_y'])
  })

  it('writes nothing when the plan refuses, and answers the refusal', async () => {
    await addToLoadedSet(home, 'proj', 'main', [entry('a', 'x')])
    const file = loadedSetPath(home, 'proj', 'main') as string
    const before = readFileSync(file, 'utf8')
    const r = await updateLoadedSet(home, 'proj', 'main', () => ({ ok: false, error: 'no' }))
    expect(r).toEqual({ ok: false, error: 'no' })
    expect(readFileSync(file, 'utf8')).toBe(before)
  })
})
