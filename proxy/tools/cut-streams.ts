/**
 * A `fetch` for the streamable HTTP client transport that notices a POST answer stream (SSE) cut
 * short. The SDK (1.x) resumes such a stream only when the host sent an event id, and otherwise
 * leaves the request it carried pending until its deadline; holdfast wants the call answered at
 * once. Invariant: bytes pass through unchanged; `onCut` runs once per cut stream, never for a
 * stream that ended normally or that the reader cancelled.
 */
export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>

export function fetchNoticingCuts(onCut: (err: unknown) => void): FetchLike {
  return async (url, init) => {
    const res = await fetch(url, init)
    const sse = (res.headers.get('content-type') ?? '').startsWith('text/event-stream')
    if ((init?.method ?? 'GET') !== 'POST' || !sse || !res.body) return res
    const reader = res.body.getReader()
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        let r: Awaited<ReturnType<typeof reader.read>>
        try {
          r = await reader.read()
        } catch (err) {
          onCut(err)
          controller.error(err)
          return
        }
        if (r.done) controller.close()
        else controller.enqueue(r.value)
      },
      cancel: (reason) => reader.cancel(reason),
    })
    return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers })
  }
}
