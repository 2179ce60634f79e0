/** view/html: interpolations are escaped unless already markup; arrays join; the shared number formats. */
import { esc, fmtMs, fmtShare, fmtTime, fmtTokens, fmtUsd, markup, raw } from '../../../proxy/view/html'

describe('markup', () => {
  it('escapes text from a record and keeps markup it made itself', () => {
    const name = `<script>alert("x")</script>&'`
    const cell = markup`<td>${name}</td>`
    expect(cell.text).toBe('<td>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;</td>')
    expect(markup`<tr>${cell}</tr>`.text).toBe(`<tr>${cell.text}</tr>`)
    expect(markup`<b title="${'a"b'}">${raw('<i>ok</i>')}</b>`.text).toBe('<b title="a&quot;b"><i>ok</i></b>')
  })

  it('joins arrays and renders null, undefined and false as nothing, numbers as text', () => {
    expect(markup`${['a', markup`<br>`, 1, null, undefined, false, ['<']]}`.text).toBe('a<br>1&lt;')
    expect(esc('plain')).toBe('plain')
  })
})

describe('formats', () => {
  it('says "-" for a missing value and formats tokens, dollars, shares, times and durations', () => {
    expect([fmtTokens(null), fmtUsd(undefined), fmtShare(null), fmtMs(null), fmtTime(null)]).toEqual([
      '-',
      '-',
      '-',
      '-',
      '-',
    ])
    expect(fmtTokens(1234567)).toBe('1\u202f234\u202f567')
    expect([fmtUsd(0), fmtUsd(0.0042), fmtUsd(1.5)]).toEqual(['$0.00', '$0.0042', '$1.50'])
    expect(fmtShare(0.976)).toBe('98%')
    expect([fmtMs(840.4), fmtMs(12_345)]).toEqual(['840 ms', '12.3 s'])
    expect(fmtTime('2026-12-06T05:03:31.123Z')).toBe('2026-12-06 05:03:31')
  })
})
