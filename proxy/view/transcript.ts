/**
 * A conversation as a transcript: messages (or input items) with their text, tool calls and tool
 * results, thinking, and the answer, read by shape rather than by dialect name (anthropic content
 * blocks, openai tool_calls and tool messages, responses items), so every dialect reads the same.
 * Pure. Invariant: nothing is dropped — a block of an unknown shape is shown as its JSON; long text
 * is folded (a `<details>`), never cut.
 */
import { isObject, type Json, type JsonObject } from '../core/json'
import { type Html, markup } from './html'

/** Text longer than this (characters or lines) is folded behind its first line. */
export const FOLD_CHARS = 1200
export const FOLD_LINES = 20

/** A text, folded when long. */
export function textHtml(text: string, cls = ''): Html {
  const lines = text.split('\n').length
  if (text.length <= FOLD_CHARS && lines <= FOLD_LINES) return markup`<pre class="${cls}">${text}</pre>`
  const first = (text.split('\n').find((l) => l.trim() !== '') ?? '').slice(0, 120)
  return markup`<details class="${cls}">
    <summary>${first}… <span class="muted">(${text.length} chars, ${lines} lines)</span></summary>
    <pre>${text}</pre>
  </details>`
}

const json = (v: Json | undefined): string => JSON.stringify(v ?? null, null, 2)

/** A JSON value, folded when long (tool inputs, unknown blocks). */
const jsonHtml = (v: Json | undefined): Html => textHtml(json(v), 'json')

/** A string that may hold JSON (openai and responses arguments) shown pretty when it does. */
function argsHtml(args: Json | undefined): Html {
  if (typeof args !== 'string') return jsonHtml(args)
  try {
    return jsonHtml(JSON.parse(args) as Json)
  } catch {
    return textHtml(args)
  }
}

const str = (v: Json | undefined): string => (typeof v === 'string' ? v : '')

function call(name: string, id: string, input: Html): Html {
  return markup`<div class="call">
    <span class="tag">tool call</span> <b class="mono">${name}</b>
    <span class="muted mono">${id}</span>${input}
  </div>`
}

function result(id: string, content: Html, isError: boolean): Html {
  return markup`<div class="call">
    <span class="tag${isError ? ' err' : ''}">${isError ? 'tool error' : 'tool result'}</span>
    <span class="muted mono">${id}</span>${content}
  </div>`
}

/** A content value: a string, or an array of blocks. */
export function contentHtml(content: Json | undefined): Html {
  if (content === undefined || content === null) return markup``
  if (typeof content === 'string') return textHtml(content)
  if (Array.isArray(content)) return markup`${content.map((b) => blockHtml(b))}`
  return blockHtml(content)
}

/** One content block (or one responses item), by its `type`. */
export function blockHtml(b: Json): Html {
  if (typeof b === 'string') return textHtml(b)
  if (!isObject(b)) return jsonHtml(b)
  switch (b.type) {
    case 'text':
    case 'input_text':
    case 'output_text':
      return textHtml(str(b.text))
    case 'thinking':
      return markup`<details class="block">
        <summary>thinking <span class="muted">(${str(b.thinking).length} chars)</span></summary>
        <pre>${str(b.thinking)}</pre>
      </details>`
    case 'redacted_thinking':
      return markup`<div class="block muted">(redacted thinking)</div>`
    case 'reasoning':
      return markup`<details class="block">
        <summary>reasoning</summary>
        ${contentHtml(b.summary)}
      </details>`
    case 'summary_text':
      return textHtml(str(b.text))
    case 'tool_use':
    case 'server_tool_use':
      return call(str(b.name), str(b.id), jsonHtml(b.input))
    case 'function_call':
      return call(str(b.name), str(b.call_id), argsHtml(b.arguments))
    case 'tool_result':
      return result(str(b.tool_use_id), contentHtml(b.content), b.is_error === true)
    case 'function_call_output':
      return result(
        str(b.call_id),
        typeof b.output === 'string' ? argsHtml(b.output) : contentHtml(b.output),
        false,
      )
    case 'image':
    case 'image_url':
    case 'input_image':
      return markup`<div class="block muted">(image)</div>`
    case 'document':
    case 'input_file':
      return markup`<div class="block muted">(document)</div>`
    case 'message':
      return contentHtml(b.content)
    default:
      return markup`<div class="block"><span class="tag">${str(b.type) || 'block'}</span>${jsonHtml(b)}</div>`
  }
}

/** The role an entry is shown under: its role, else its item type (responses' function calls). */
export function roleOf(entry: Json): string {
  if (!isObject(entry)) return 'entry'
  return typeof entry.role === 'string' ? entry.role : typeof entry.type === 'string' ? entry.type : 'entry'
}

/** One message or input item. */
export function entryHtml(entry: Json, extraClass = ''): Html {
  const role = roleOf(entry)
  const cls = `msg ${role.replace(/[^a-z_]/gi, '')} ${extraClass}`.trim()
  if (!isObject(entry)) return markup`<div class="${cls}">${jsonHtml(entry)}</div>`
  const e = entry as JsonObject
  const parts: Html[] = []
  if (e.type !== undefined && e.role === undefined) parts.push(blockHtml(e))
  else {
    if (typeof e.tool_call_id === 'string') {
      parts.push(result(e.tool_call_id, contentHtml(e.content), false))
    } else parts.push(contentHtml(e.content))
    if (Array.isArray(e.tool_calls)) {
      for (const c of e.tool_calls) {
        const fn = isObject(c) && isObject(c.function) ? c.function : {}
        parts.push(call(str(fn.name), isObject(c) ? str(c.id) : '', argsHtml(fn.arguments)))
      }
    }
  }
  return markup`<div class="${cls}">
    <div class="role">${role}</div>
    ${parts}
  </div>`
}
