/**
 * proxy/dialects/shared: the small rules every dialect is built from. Rules: the shape checks
 * answer undefined for a fitting value and otherwise one sentence naming the field by its path
 * from the top (`messages[1].content[0].text`), checking fields in the spec's order and never
 * what the spec does not name; token counts are finite numbers rounded, else 0; an answer that is
 * not a JSON object reports nothing; an error event inside a stream is found in either dialect's
 * form; text is read from a string or joined from text blocks.
 */
import type { Json, JsonObject } from '../../../proxy/core/json'
import {
  arrayOf,
  arrayOfChecked,
  bool,
  type Check,
  contentText,
  fields,
  firstProblem,
  int,
  jsonObjectOf,
  namesCalled,
  num,
  obj,
  oneOf,
  orNull,
  str,
  streamErrorOf,
  turnText,
} from '../../../proxy/dialects/shared'

describe('the leaf checks', () => {
  it.each<[string, Check, Json, string | undefined]>([
    ['str accepts a string', str, '', undefined],
    ['str refuses a number', str, 1, 'x must be a string'],
    ['str refuses null', str, null, 'x must be a string'],
    ['bool accepts false', bool, false, undefined],
    ['bool refuses "true"', bool, 'true', 'x must be true or false'],
    ['num accepts 0', num, 0, undefined],
    ['num accepts a fraction', num, 0.5, undefined],
    ['num refuses a numeric string', num, '5', 'x must be a number'],
    ['obj accepts {}', obj, {}, undefined],
    ['obj refuses an array', obj, [], 'x must be an object'],
    ['obj refuses null', obj, null, 'x must be an object'],
    ['orNull(str) accepts null', orNull(str), null, undefined],
    ['orNull(str) still refuses a number', orNull(str), 3, 'x must be a string'],
  ])('%s', (_what, check, v, want) => {
    expect(check(v, 'x')).toBe(want)
  })

  it('num refuses a number that is not finite (a parser that allowed NaN could not smuggle it in)', () => {
    expect(num(Number.NaN, 'max_tokens')).toBe('max_tokens must be a number')
    expect(num(Number.POSITIVE_INFINITY, 'max_tokens')).toBe('max_tokens must be a number')
  })
})

describe('composite checks name the failing field by its path', () => {
  const message = fields({
    role: str,
    content: oneOf('a string or an array of blocks', {
      string: true,
      array: arrayOfChecked(fields({ type: str, text: str }), 'blocks'),
    }),
  })
  const SPEC = { model: str, messages: arrayOfChecked(message, 'message objects'), stream: bool }
  const problem = (body: object) => firstProblem(body as JsonObject, SPEC)

  it.each<[object, string | undefined]>([
    [{ model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true }, undefined],
    [{ extra: { anything: [1, 2] }, unread: 5 }, undefined],
    [{ model: 1 }, 'model must be a string'],
    [{ messages: {} }, 'messages must be an array of message objects'],
    [{ messages: ['hi'] }, 'messages[0] must be an object'],
    [{ messages: [{ role: 'user', content: 'a' }, { role: 2 }] }, 'messages[1].role must be a string'],
    [
      { messages: [{ role: 'user', content: 3 }] },
      'messages[0].content must be a string or an array of blocks',
    ],
    [
      { messages: [{ role: 'user', content: null }] },
      'messages[0].content must be a string or an array of blocks',
    ],
    [
      {
        messages: [
          {
            content: [
              { type: 'text', text: 'a' },
              { type: 'text', text: false },
            ],
          },
        ],
      },
      'messages[0].content[1].text must be a string',
    ],
    [{ messages: [{ content: [{ type: 'image', source: { whatever: 1 } }] }] }, undefined],
  ])('%j → %s', (body, want) => {
    expect(problem(body)).toBe(want)
  })

  it("reports the first problem in the spec's order, not the body's", () => {
    expect(problem({ stream: 'no', model: 5 })).toBe('model must be a string')
  })

  it('requires the fields it is told to, before checking the others', () => {
    const tool = fields({ name: str, cache_control: obj }, ['name'])
    expect(tool({ cache_control: 1 }, 'tools[2]')).toBe('tools[2].name is required')
    expect(tool({ name: 'x', cache_control: 1 }, 'tools[2]')).toBe('tools[2].cache_control must be an object')
    expect(tool('x', 'tools[2]')).toBe('tools[2] must be an object')
  })

  it('oneOf answers "must be …" for a kind it does not list (numbers and booleans have none)', () => {
    const choice = oneOf('a string or an object', { string: true, object: true })
    expect(choice('auto', 'tool_choice')).toBeUndefined()
    expect(choice({ type: 'auto' }, 'tool_choice')).toBeUndefined()
    expect(choice(1, 'tool_choice')).toBe('tool_choice must be a string or an object')
    expect(choice(true, 'tool_choice')).toBe('tool_choice must be a string or an object')
    expect(choice(null, 'tool_choice')).toBe('tool_choice must be a string or an object')
    expect(choice([], 'tool_choice')).toBe('tool_choice must be a string or an object')
  })
})

describe('reading answers', () => {
  it.each<[Json | undefined, number]>([
    [12, 12],
    [12.5, 13],
    [12.4, 12],
    ['12', 0],
    [null, 0],
    [undefined, 0],
  ])('reads the token count %j as %d', (v, want) => {
    expect(int(v)).toBe(want)
  })

  it('reads a JSON object answer, and nothing from an HTML error page, an array or a torn body', () => {
    expect(jsonObjectOf(Buffer.from('{"usage":{"input_tokens":3}}'))).toEqual({ usage: { input_tokens: 3 } })
    expect(jsonObjectOf(Buffer.from('<html><body>502 Bad Gateway</body></html>'))).toBeUndefined()
    expect(jsonObjectOf(Buffer.from('[{"a":1}]'))).toBeUndefined()
    expect(jsonObjectOf(Buffer.from('{"usage":{"input_'))).toBeUndefined()
    expect(jsonObjectOf(Buffer.alloc(0))).toBeUndefined()
  })

  it('finds the error event of an anthropic stream and the error chunk of an openai stream', () => {
    expect(
      streamErrorOf([
        { type: 'message_start', message: {} },
        { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
      ]),
    ).toEqual({ type: 'overloaded_error', message: 'Overloaded' })
    expect(streamErrorOf([{ error: { message: 'The server had an error', code: 500 } }])).toEqual({
      type: 'error',
      message: 'The server had an error',
    })
    expect(streamErrorOf([{ type: 'error', error: { code: 'x' } }])).toEqual({
      type: 'error',
      message: '{"code":"x"}',
    })
  })

  it('takes no other event for an error, even one with an error field', () => {
    expect(streamErrorOf([{ type: 'response.output_item.done', error: { message: 'm' } }])).toBeNull()
    expect(streamErrorOf([{ type: 'error', error: 'a string, not an object' }])).toBeNull()
    expect(streamErrorOf([])).toBeNull()
  })
})

describe('text and transcripts', () => {
  it('reads a string content as is and joins the text of blocks with newlines, skipping the rest', () => {
    expect(contentText('plain')).toBe('plain')
    expect(
      contentText([
        { type: 'text', text: 'one' },
        { type: 'image', source: {} },
        { type: 'tool_result', content: 'not read' },
        { type: 'input_text', text: 'two' },
      ]),
    ).toBe('one\ntwo')
    expect(contentText(null)).toBe('')
    expect(contentText(undefined)).toBe('')
  })

  it('shows an answer as its text parts and one "[calls <name>]" line per tool call', () => {
    expect(turnText([{ text: 'Let me look.' }, { call: 'Read' }, { call: 'Bash' }])).toBe(
      'Let me look.\n[calls Read]\n[calls Bash]',
    )
    expect(turnText([])).toBe('')
  })

  it('reads a non-array as no entries', () => {
    const list = [1, 2]
    expect(arrayOf(list)).toBe(list)
    expect(arrayOf({ 0: 'a' })).toEqual([])
    expect(arrayOf(undefined)).toEqual([])
  })

  it("lists the names only the assistant's messages call, first seen first, skipping what is not a string", () => {
    const body: JsonObject = {
      messages: [
        { role: 'user', calls: ['UserSaid'] },
        'not a message',
        { role: 'assistant', calls: ['B', 7, null, 'A'] },
        { role: 'assistant', calls: ['A', 'C'] },
      ],
    }
    const names = namesCalled(body, (m) => arrayOf(m.calls))
    expect(names).toEqual(['B', 'A', 'C'])
    expect(namesCalled({ messages: 'x' }, () => ['never'])).toEqual([])
  })
})
