/** An attempt's first request (core/continuation): notch, reply, tool answers, skills, goal. */
import { firstRequest, NOT_RUN } from '../../../proxy/core/continuation'
import { anthropic, openai } from '../../../proxy/dialects'
import { responses } from '../../../proxy/dialects/responses'

const notchRequest = {
  model: 'claude-sonnet-4-5',
  max_tokens: 300,
  tools: [{ name: 'Read', description: 'r', input_schema: { type: 'object' } }],
  messages: [{ role: 'user', content: 'look at a.ts' }],
}
const thinking = { type: 'thinking', thinking: 'hmm', signature: 's' }
const reply = {
  turn: [
    {
      role: 'assistant',
      content: [thinking, { type: 'tool_use', id: 'tu_1', name: 'Read', input: { path: 'a.ts' } }],
    },
  ],
  text: '[calls Read]',
  toolCalls: [{ id: 'tu_1', name: 'Read' }],
}

describe("an attempt's first request", () => {
  it('continues the notch: its request, its reply, error results for its tool calls, then skills and the goal', () => {
    const body = firstRequest(anthropic, {
      notch: { request: notchRequest, reply },
      goal: 'Now review it.',
      skills: [{ dest: 'skills/review/SKILL.md', text: 'Be strict.\n' }],
      roleModel: 'claude-sonnet-4-5',
    })
    expect(body.tools).toBe(notchRequest.tools)
    expect(body.max_tokens).toBe(300)
    expect(body.stream).toBe(true)
    expect(body.messages).toEqual([
      notchRequest.messages[0],
      ...reply.turn,
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'tu_1', is_error: true, content: NOT_RUN },
          {
            type: 'text',
            text: '<skill path="skills/review/SKILL.md">\nBe strict.\n</skill>\n\nNow review it.',
          },
        ],
      },
    ])
  })

  it('drops thinking blocks when the role model differs from the notch model', () => {
    const body = firstRequest(anthropic, {
      notch: { request: notchRequest, reply },
      goal: 'g',
      skills: [],
      roleModel: 'claude-haiku-4-5',
    })
    const assistant = (body.messages as { content: { type: string }[] }[])[1]
    expect(assistant?.content.map((b) => b.type)).toEqual(['tool_use'])
  })

  it("takes the role's max_output_tokens, else 4096, when the notch sent none", () => {
    const { max_tokens: _, ...noMax } = notchRequest
    expect(
      firstRequest(anthropic, {
        notch: { request: noMax, reply },
        goal: 'g',
        skills: [],
        roleModel: 'm',
        roleMaxTokens: 900,
      }).max_tokens,
    ).toBe(900)
    expect(
      firstRequest(anthropic, { notch: { request: noMax, reply }, goal: 'g', skills: [], roleModel: 'm' })
        .max_tokens,
    ).toBe(4096)
  })

  it('answers openai tool calls with tool messages before the goal', () => {
    const body = firstRequest(openai, {
      notch: {
        request: { model: 'gpt-5', messages: [{ role: 'user', content: 'q' }] },
        reply: {
          turn: [{ role: 'assistant', content: null, tool_calls: [] }],
          text: '[calls f]',
          toolCalls: [{ id: 'c1', name: 'f' }],
        },
      },
      goal: 'g',
      skills: [],
      roleModel: 'gpt-5',
    })
    expect((body.messages as object[]).slice(2)).toEqual([
      { role: 'tool', tool_call_id: 'c1', content: NOT_RUN },
      { role: 'user', content: 'g' },
    ])
    expect(body.stream_options).toEqual({ include_usage: true })
    expect(body.max_completion_tokens).toBe(4096)
  })

  it('is just the goal from a clean start', () => {
    expect(firstRequest(anthropic, { goal: 'Start fresh.', skills: [], roleModel: 'm' })).toEqual({
      model: 'm',
      max_tokens: 4096,
      stream: true,
      messages: [{ role: 'user', content: 'Start fresh.' }],
    })
  })

  it('names the notch’s answer in its diagnostics, never the stale id the notch’s request carried', () => {
    const asked = { ...notchRequest, diagnostics: { previous_message_id: 'msg_before_the_notch' } }
    const input = {
      notch: { request: asked, reply },
      goal: 'Go.',
      skills: [],
      roleModel: 'claude-sonnet-4-5',
    }
    expect(firstRequest(anthropic, { ...input, answerId: 'msg_the_notch' }).diagnostics).toEqual({
      previous_message_id: 'msg_the_notch',
    })
    // No answer id recorded: the opt-in stays, the stale id goes.
    expect(firstRequest(anthropic, { ...input, answerId: null }).diagnostics).toEqual({})
    // A notch that did not ask is not made to.
    expect(
      firstRequest(anthropic, { ...input, notch: { request: notchRequest, reply }, answerId: 'msg_x' }),
    ).not.toHaveProperty('diagnostics')
  })

  it('names the notch’s response in prompt_cache_options.comparison_response_id (responses)', () => {
    const request = {
      model: 'gpt-5.6',
      input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] }],
      prompt_cache_options: { comparison_response_id: 'resp_stale', retention: 'in_memory' },
    }
    const body = firstRequest(responses, {
      notch: { request, reply: undefined },
      answerId: 'resp_notch',
      goal: 'Go.',
      skills: [],
      roleModel: 'gpt-5.6',
    })
    expect(body.prompt_cache_options).toEqual({
      comparison_response_id: 'resp_notch',
      retention: 'in_memory',
    })
  })
})
