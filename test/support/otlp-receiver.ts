/**
 * A loopback OTLP/HTTP traces receiver for tests (node:http on 127.0.0.1): it decodes what it is
 * sent for real — protobuf (`application/x-protobuf`) through protobufjs and the OTLP trace
 * messages below, field numbers as opentelemetry-proto defines them, and OTLP/JSON — into one
 * plain shape per span. `hang` makes it take requests and never answer (a backend that stalls).
 * Invariant: `close()` ends every connection it holds, so nothing it started outlives a test.
 */
import * as http from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import protobuf from 'protobufjs'

/** The subset of opentelemetry-proto (common, resource, trace, collector trace service) a span needs. */
const OTLP_PROTO = `
syntax = "proto3";
package opentelemetry.proto;

message AnyValue {
  oneof value {
    string string_value = 1;
    bool bool_value = 2;
    int64 int_value = 3;
    double double_value = 4;
    ArrayValue array_value = 5;
    KeyValueList kvlist_value = 6;
    bytes bytes_value = 7;
  }
}
message ArrayValue { repeated AnyValue values = 1; }
message KeyValueList { repeated KeyValue values = 1; }
message KeyValue { string key = 1; AnyValue value = 2; }
message InstrumentationScope {
  string name = 1;
  string version = 2;
  repeated KeyValue attributes = 3;
  uint32 dropped_attributes_count = 4;
}
message Resource {
  repeated KeyValue attributes = 1;
  uint32 dropped_attributes_count = 2;
}
message Status {
  string message = 2;
  int32 code = 3;
}
message Span {
  bytes trace_id = 1;
  bytes span_id = 2;
  string trace_state = 3;
  bytes parent_span_id = 4;
  fixed32 flags = 16;
  string name = 5;
  int32 kind = 6;
  fixed64 start_time_unix_nano = 7;
  fixed64 end_time_unix_nano = 8;
  repeated KeyValue attributes = 9;
  uint32 dropped_attributes_count = 10;
  uint32 dropped_events_count = 12;
  uint32 dropped_links_count = 14;
  Status status = 15;
}
message ScopeSpans {
  InstrumentationScope scope = 1;
  repeated Span spans = 2;
  string schema_url = 3;
}
message ResourceSpans {
  Resource resource = 1;
  repeated ScopeSpans scope_spans = 2;
  string schema_url = 3;
}
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
`

const root = protobuf.parse(OTLP_PROTO, { keepCase: true }).root
const ExportTraceServiceRequest = root.lookupType('opentelemetry.proto.ExportTraceServiceRequest')

export type Value = string | number | boolean | Value[] | { [k: string]: Value } | null

/** One span as received, whichever encoding carried it. */
export interface ReceivedSpan {
  traceId: string
  spanId: string
  parentSpanId: string
  traceState: string
  name: string
  /** OTLP SpanKind: 3 is CLIENT. */
  kind: number
  startNs: bigint
  endNs: bigint
  attributes: Record<string, Value>
  status: { code: number; message: string }
  resource: Record<string, Value>
  scope: { name: string; version: string }
}

export interface ReceivedExport {
  contentType: string
  headers: http.IncomingHttpHeaders
  spans: ReceivedSpan[]
}

type Obj = Record<string, unknown>
const hex = (v: unknown): string =>
  v instanceof Uint8Array ? Buffer.from(v).toString('hex') : typeof v === 'string' ? v : ''

/** An AnyValue as a plain value (protobuf keeps snake_case keys, JSON camelCase). */
function anyValue(v: Obj | undefined): Value {
  if (!v) return null
  const pick = (snake: string, camel: string): unknown => v[snake] ?? v[camel]
  if (pick('string_value', 'stringValue') !== undefined) return pick('string_value', 'stringValue') as string
  if (pick('bool_value', 'boolValue') !== undefined) return pick('bool_value', 'boolValue') as boolean
  if (pick('int_value', 'intValue') !== undefined) return Number(pick('int_value', 'intValue'))
  if (pick('double_value', 'doubleValue') !== undefined) return Number(pick('double_value', 'doubleValue'))
  const array = pick('array_value', 'arrayValue') as { values?: Obj[] } | undefined
  if (array) return (array.values ?? []).map(anyValue)
  const list = pick('kvlist_value', 'kvlistValue') as { values?: Obj[] } | undefined
  if (list) return attributes(list.values)
  return null
}

function attributes(kvs: Obj[] | undefined): Record<string, Value> {
  const out: Record<string, Value> = {}
  for (const kv of kvs ?? []) out[kv.key as string] = anyValue(kv.value as Obj | undefined)
  return out
}

/** The spans of an ExportTraceServiceRequest, decoded to plain objects (either encoding). */
function spansOf(request: Obj): ReceivedSpan[] {
  const out: ReceivedSpan[] = []
  const g = (o: Obj | undefined, snake: string, camel: string): unknown => o?.[snake] ?? o?.[camel]
  for (const rs of (g(request, 'resource_spans', 'resourceSpans') ?? []) as Obj[]) {
    const resource = attributes((rs.resource as Obj | undefined)?.attributes as Obj[] | undefined)
    for (const ss of (g(rs, 'scope_spans', 'scopeSpans') ?? []) as Obj[]) {
      const scope = (ss.scope ?? {}) as Obj
      for (const s of (ss.spans ?? []) as Obj[]) {
        const status = (s.status ?? {}) as Obj
        out.push({
          traceId: hex(g(s, 'trace_id', 'traceId')),
          spanId: hex(g(s, 'span_id', 'spanId')),
          parentSpanId: hex(g(s, 'parent_span_id', 'parentSpanId')),
          traceState: (g(s, 'trace_state', 'traceState') as string | undefined) ?? '',
          name: s.name as string,
          kind: Number(s.kind ?? 0),
          startNs: BigInt(String(g(s, 'start_time_unix_nano', 'startTimeUnixNano') ?? 0)),
          endNs: BigInt(String(g(s, 'end_time_unix_nano', 'endTimeUnixNano') ?? 0)),
          attributes: attributes(s.attributes as Obj[] | undefined),
          status: { code: Number(status.code ?? 0), message: (status.message as string | undefined) ?? '' },
          resource,
          scope: { name: (scope.name as string) ?? '', version: (scope.version as string) ?? '' },
        })
      }
    }
  }
  return out
}

export interface OtlpReceiver {
  /** The OTLP base URL (`/v1/traces` is where spans are posted). */
  url: string
  port: number
  exports: ReceivedExport[]
  /** Every span received, in order. */
  spans(): ReceivedSpan[]
  /** Resolves once at least `n` spans have arrived (rejects after `ms`). */
  waitForSpans(n: number, ms?: number): Promise<ReceivedSpan[]>
  /** Take requests and never answer them. */
  hang: boolean
  /** Requests taken, answered or not. */
  requests: number
  /** Why requests could not be decoded (answered 400). */
  errors: string[]
  close(): Promise<void>
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const sockets = new Set<Socket>()
  const waiters: (() => boolean)[] = []
  const r: OtlpReceiver = {
    url: '',
    port: 0,
    exports: [],
    hang: false,
    requests: 0,
    errors: [],
    spans: () => r.exports.flatMap((e) => e.spans),
    waitForSpans: (n, ms = 10_000) =>
      new Promise((resolve, reject) => {
        const check = (): boolean => {
          if (r.spans().length < n) return false
          clearTimeout(timer)
          resolve(r.spans())
          return true
        }
        const timer = setTimeout(
          () => reject(new Error(`${r.spans().length} spans arrived, ${n} awaited`)),
          ms,
        )
        if (!check()) waiters.push(check)
      }),
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy()
        server.close(() => resolve())
      }),
  }
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      r.requests++
      if (r.hang) return
      const body = Buffer.concat(chunks)
      const contentType = String(req.headers['content-type'] ?? '')
      const json = contentType.includes('json')
      try {
        const request = json
          ? (JSON.parse(body.toString('utf8')) as Obj)
          : (ExportTraceServiceRequest.toObject(ExportTraceServiceRequest.decode(body), {
              longs: String,
              defaults: false,
            }) as Obj)
        r.exports.push({ contentType, headers: req.headers, spans: spansOf(request) })
      } catch (err) {
        r.errors.push(String(err))
        res.writeHead(400, { 'content-type': 'text/plain' })
        res.end(String(err))
        return
      }
      for (const w of waiters.splice(0)) if (!w()) waiters.push(w)
      // An empty ExportTraceServiceResponse: no bytes in protobuf, `{}` in JSON.
      res.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' })
      res.end(json ? '{}' : '')
    })
  })
  server.on('connection', (s: Socket) => {
    sockets.add(s)
    s.on('close', () => sockets.delete(s))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  r.port = (server.address() as AddressInfo).port
  r.url = `http://127.0.0.1:${r.port}`
  return r
}
