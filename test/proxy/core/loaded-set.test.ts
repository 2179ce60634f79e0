import type { AdvertisedTool, LoadedEntry } from '../../../proxy/core/loaded-set'
import {
  decodeAdvertisedTool,
  decodeLoadedSet,
  encodeLoadedSet,
  planLoad,
  planUnload,
  presentedName,
  unionLoaded,
} from '../../../proxy/core/loaded-set'

function tool(name: string, description = `${name} does things`): AdvertisedTool {
  return { name, description, input_schema: { type: 'object', properties: { x: { type: 'string' } } } }
}

function entry(client: string, name: string, description?: string): LoadedEntry {
  return { client, tool: tool(name, description) }
}

function errorOf<T>(d: { ok: true; value: T } | { ok: false; error: string }): string {
  if (d.ok) throw new Error(`expected a refusal, got ${JSON.stringify(d.value)}`)
  return d.error
}

function valueOf<T>(d: { ok: true; value: T } | { ok: false; error: string }): T {
  if (!d.ok) throw new Error(`expected a value, got the refusal: ${d.error}`)
  return d.value
}

describe('presented names', () => {
  it('prefixes the tool name with its client and an underscore, always', () => {
    expect(presentedName(entry('laptop', 'Bash'))).toBe('laptop_Bash')
  })

  it('prefixes even when no other client advertises the same tool', () => {
    expect(presentedName(entry('only', 'unique'))).toBe('only_unique')
  })
})

describe('encodeLoadedSet', () => {
  it('writes each entry as {client, tool: {name, description, input_schema}}', () => {
    const e = entry('laptop', 'Bash', '')
    expect(encodeLoadedSet([e])).toEqual([
      { client: 'laptop', tool: { name: 'Bash', description: '', input_schema: e.tool.input_schema } },
    ])
  })

  it('encodes the empty set as an empty array', () => {
    expect(encodeLoadedSet([])).toEqual([])
  })

  it('round-trips through decodeLoadedSet', () => {
    const set = [entry('a', 'x'), entry('b', 'y', '')]
    expect(valueOf(decodeLoadedSet(JSON.parse(JSON.stringify(encodeLoadedSet(set)))))).toEqual(set)
  })
})

describe('decodeAdvertisedTool', () => {
  it('accepts an empty description, as MCP leaves it optional', () => {
    expect(valueOf(decodeAdvertisedTool({ name: 'x', description: '', input_schema: {} }))).toEqual({
      name: 'x',
      description: '',
      input_schema: {},
    })
  })

  it('refuses a value that is not an object', () => {
    expect(errorOf(decodeAdvertisedTool([]))).toBe('not a JSON object')
    expect(errorOf(decodeAdvertisedTool(null))).toBe('not a JSON object')
  })

  it.each(['name', 'description', 'input_schema'])('names the missing field %s', (key) => {
    const t: Record<string, unknown> = { ...tool('x') }
    delete t[key]
    expect(errorOf(decodeAdvertisedTool(t))).toBe(`missing field "${key}"`)
  })

  it('names "name" when it is not a string', () => {
    expect(errorOf(decodeAdvertisedTool({ ...tool('x'), name: 3 }))).toBe('field "name" is not a string')
  })

  it('names "name" when it is not a path component', () => {
    expect(errorOf(decodeAdvertisedTool({ ...tool('x'), name: 'a/b' }))).toContain('field "name" is "a/b"')
  })

  it('names "description" when it is not a string', () => {
    expect(errorOf(decodeAdvertisedTool({ ...tool('x'), description: null }))).toBe(
      'field "description" is not a string',
    )
  })

  it('names "input_schema" when it is not a JSON object', () => {
    expect(errorOf(decodeAdvertisedTool({ ...tool('x'), input_schema: [] }))).toBe(
      'field "input_schema" is not a JSON object',
    )
  })

  it('refuses an unknown key, naming it', () => {
    expect(errorOf(decodeAdvertisedTool({ ...tool('x'), title: 'X' }))).toBe('unknown field "title"')
  })
})

describe('decodeLoadedSet', () => {
  const good = { client: 'laptop', tool: tool('Bash') }

  it('reads the empty array as the empty set', () => {
    expect(valueOf(decodeLoadedSet([]))).toEqual([])
  })

  it('refuses a value that is not an array', () => {
    expect(errorOf(decodeLoadedSet({}))).toBe('loaded: not an array')
  })

  it('refuses an element that is not an object, naming its index', () => {
    expect(errorOf(decodeLoadedSet([good, { client: 'other', tool: tool('Bash') }, 'x']))).toBe(
      'loaded: element 2 is not a JSON object',
    )
  })

  it('names a missing "client"', () => {
    expect(errorOf(decodeLoadedSet([{ tool: tool('Bash') }]))).toBe(
      'loaded: element 0: missing field "client"',
    )
  })

  it('names a "client" that is not a string', () => {
    expect(errorOf(decodeLoadedSet([{ ...good, client: 1 }]))).toBe(
      'loaded: element 0: field "client" is not a string',
    )
  })

  it('names a "client" that is not a usable client name', () => {
    expect(errorOf(decodeLoadedSet([{ ...good, client: '..' }]))).toContain(
      'loaded: element 0: field "client": client name ".."',
    )
  })

  it('names a missing "tool"', () => {
    expect(errorOf(decodeLoadedSet([{ client: 'laptop' }]))).toBe('loaded: element 0: missing field "tool"')
  })

  it('names the tool-level key inside "tool"', () => {
    expect(errorOf(decodeLoadedSet([{ client: 'laptop', tool: { name: 'Bash', input_schema: {} } }]))).toBe(
      'loaded: element 0: field "tool": missing field "description"',
    )
    expect(
      errorOf(decodeLoadedSet([{ client: 'laptop', tool: { ...tool('Bash'), input_schema: 'x' } }])),
    ).toBe('loaded: element 0: field "tool": field "input_schema" is not a JSON object')
    expect(errorOf(decodeLoadedSet([{ client: 'laptop', tool: { ...tool('Bash'), name: false } }]))).toBe(
      'loaded: element 0: field "tool": field "name" is not a string',
    )
  })

  it('refuses an unknown key on an element, naming it', () => {
    expect(errorOf(decodeLoadedSet([{ ...good, extra: true }]))).toBe(
      'loaded: element 0: unknown field "extra"',
    )
  })

  it('refuses an entry whose presented name is not callable', () => {
    expect(errorOf(decodeLoadedSet([{ client: 'laptop.local', tool: tool('Bash') }]))).toContain(
      'presented name "laptop.local_Bash" is not callable',
    )
  })

  it('refuses two entries with the same presented name', () => {
    expect(errorOf(decodeLoadedSet([good, { ...good, tool: tool('Bash', 'other') }]))).toBe(
      'loaded: element 1: presented name "laptop_Bash" repeats element 0',
    )
  })
})

describe('unionLoaded', () => {
  it('keeps both sides, sorted by presented name', () => {
    const u = unionLoaded([entry('b', 'x')], [entry('a', 'z'), entry('a', 'y')])
    expect(u.map(presentedName)).toEqual(['a_y', 'a_z', 'b_x'])
  })

  it('lets the later definition win for the same presented name', () => {
    const u = unionLoaded([entry('a', 'x', 'old')], [entry('a', 'x', 'new')])
    expect(u).toEqual([entry('a', 'x', 'new')])
  })

  it('lets the later entry win within the added list too', () => {
    const u = unionLoaded([], [entry('a', 'x', 'first'), entry('a', 'x', 'second')])
    expect(u).toEqual([entry('a', 'x', 'second')])
  })

  it('sorts by plain code-unit order (upper case before lower case)', () => {
    const u = unionLoaded([], [entry('c', 'b'), entry('c', 'B'), entry('c', '_'), entry('c', 'a')])
    expect(u.map(presentedName)).toEqual(['c_B', 'c__', 'c_a', 'c_b'])
  })

  it('answers the empty set for two empty sets', () => {
    expect(unionLoaded([], [])).toEqual([])
  })

  it('does not change its inputs', () => {
    const existing = [entry('b', 'x'), entry('a', 'x')]
    unionLoaded(existing, [entry('a', 'x', 'new')])
    expect(existing.map(presentedName)).toEqual(['b_x', 'a_x'])
    expect(existing[1]?.tool.description).toBe('x does things')
  })
})

describe('planLoad', () => {
  const advertised = [tool('Bash'), tool('Read'), tool('Edit')]

  it('plans the named tools in presented-name order', () => {
    const planned = valueOf(planLoad('laptop', advertised, ['Read', 'Bash']))
    expect(planned).toEqual([
      { client: 'laptop', tool: tool('Bash') },
      { client: 'laptop', tool: tool('Read') },
    ])
  })

  it('counts a tool named twice once', () => {
    expect(valueOf(planLoad('laptop', advertised, ['Bash', 'Bash'])).map(presentedName)).toEqual([
      'laptop_Bash',
    ])
  })

  it('freezes a copy of the definition, unaffected by later changes to the advertisement', () => {
    const ad = [tool('Bash')]
    const planned = valueOf(planLoad('laptop', ad, ['Bash']))
    ;(ad[0]!.input_schema as { type: string }).type = 'changed'
    expect(planned[0]?.tool.input_schema.type).toBe('object')
  })

  it('refuses the whole load when one named tool is not advertised', () => {
    const d = planLoad('laptop', advertised, ['Bash', 'Write', 'Read'])
    expect(errorOf(d)).toBe('client "laptop" advertises no tool "Write" right now')
  })

  it('lists every problem, joined with "; "', () => {
    expect(errorOf(planLoad('laptop', advertised, ['Write', 'Grep']))).toBe(
      'client "laptop" advertises no tool "Write" right now; client "laptop" advertises no tool "Grep" right now',
    )
  })

  it('refuses an empty tool list', () => {
    expect(errorOf(planLoad('laptop', advertised, []))).toContain('at least one tool')
  })

  it('refuses an unusable client name, naming it', () => {
    expect(errorOf(planLoad('a/b', advertised, ['Bash']))).toContain('client name "a/b"')
    expect(errorOf(planLoad('x.lock', advertised, ['Bash']))).toContain('client name "x.lock"')
  })

  it('refuses a presented name that is not callable, naming it and the rule', () => {
    const error = errorOf(planLoad('laptop.local', [tool('Bash')], ['Bash']))
    expect(error).toContain('presented name "laptop.local_Bash" is not callable')
    expect(error).toContain('1 to 64 ASCII letters, digits, "_" or "-"')
  })

  it('accepts a presented name of 64 characters', () => {
    const name = 'x'.repeat(64 - 'laptop_'.length)
    expect(valueOf(planLoad('laptop', [tool(name)], [name])).map(presentedName)).toEqual([`laptop_${name}`])
  })

  it('refuses a presented name of 65 characters', () => {
    const name = 'x'.repeat(65 - 'laptop_'.length)
    expect(errorOf(planLoad('laptop', [tool(name)], [name]))).toContain('(65 characters)')
  })

  it('refuses an empty tool name even if it is advertised', () => {
    expect(errorOf(planLoad('laptop', [tool('')], ['']))).toContain('tool name ""')
  })

  it('refuses a tool the client advertises twice, as the definition is ambiguous', () => {
    expect(errorOf(planLoad('laptop', [tool('Bash', 'a'), tool('Bash', 'b')], ['Bash']))).toContain(
      'advertises tool "Bash" 2 times',
    )
  })

  it('refuses all tools when one is fine and another is not callable', () => {
    const long = 'x'.repeat(60)
    const error = errorOf(planLoad('laptop', [tool('Bash'), tool(long)], ['Bash', long]))
    expect(error).toBe(
      `presented name "laptop_${long}" is not callable (67 characters): a tool name a provider accepts is 1 to 64 ASCII letters, digits, "_" or "-"`,
    )
  })
})

describe('planUnload', () => {
  const existing = [entry('a', 'x'), entry('a', 'y'), entry('b', 'x')]

  it('answers the remaining set, in its order', () => {
    expect(valueOf(planUnload(existing, ['a_y'])).map(presentedName)).toEqual(['a_x', 'b_x'])
  })

  it('may leave the empty set', () => {
    expect(valueOf(planUnload(existing, ['a_x', 'a_y', 'b_x']))).toEqual([])
  })

  it('counts a name given twice once', () => {
    expect(valueOf(planUnload(existing, ['a_x', 'a_x'])).map(presentedName)).toEqual(['a_y', 'b_x'])
  })

  it('refuses the whole unload when one name is not loaded, naming it', () => {
    expect(errorOf(planUnload(existing, ['a_x', 'c_z']))).toBe('no tool "c_z" is loaded for this agent')
  })

  it('removes by presented name, not by the advertised name', () => {
    expect(errorOf(planUnload(existing, ['x']))).toBe('no tool "x" is loaded for this agent')
  })

  it('refuses an empty list', () => {
    expect(errorOf(planUnload(existing, []))).toContain('at least one tool')
  })

  it('does not change the existing set', () => {
    planUnload(existing, ['a_x'])
    expect(existing).toHaveLength(3)
  })
})
