/**
 * A socket message as an event of `response.sse`: `event:` names its type, `data:` carries its
 * bytes (a line break inside starts another data line, so the stream reads back the same); a
 * binary one is base64 under `websocket.binary`, a text one that names no type `websocket.text`.
 */
import { sseEvents } from '../../../proxy/core/sse'
import { sseChunk } from '../../../proxy/socket/answer'

describe('a socket message in response.sse', () => {
  it('is one event named by its type, its bytes the data', () => {
    const data = Buffer.from('{"type":"response.created","response":{"id":"r"}}')
    expect(sseChunk('response.created', data, false).toString()).toBe(
      `event: response.created\ndata: ${data.toString()}\n\n`,
    )
  })

  it('reads back the same when the event spans lines', () => {
    const data = Buffer.from('{\n  "type": "response.completed",\n  "n": 1\n}')
    expect(sseEvents(sseChunk('response.completed', data, false).toString())).toEqual([
      { type: 'response.completed', n: 1 },
    ])
  })

  it('is base64 for a binary message, and websocket.text for text that names no type', () => {
    expect(sseChunk(undefined, Buffer.from([0, 255]), true).toString()).toBe(
      'event: websocket.binary\ndata: AP8=\n\n',
    )
    expect(sseChunk(undefined, Buffer.from('hello'), false).toString()).toBe(
      'event: websocket.text\ndata: hello\n\n',
    )
    expect(sseChunk('bad type\nevent: x', Buffer.from('{}'), false).toString()).toBe(
      'event: websocket.text\ndata: {}\n\n',
    )
  })
})
