/**
 * The one place holdfast exports to an OpenTelemetry backend: finished steps' spans, over
 * OTLP/HTTP (protobuf or JSON), in batches (docs/telemetry.md).
 *
 * Where the work is: the span's facts are made by the finish in the commit worker (proxy/record/
 * span.ts: it has the finished meta and the answer there, and the request path has nothing to
 * add); this server thread, once the step's commit has landed (so the span names its commit),
 * only turns them into an SDK span and ends it into the BatchSpanProcessor's bounded queue. The
 * SDK runs here, not in the worker, because a worker is restarted and terminated with the commits
 * (a shutdown's flush and the health's counts would cross threads); what it costs this thread is
 * a batch's encoding every few seconds, off any request. A full queue drops the span (counted,
 * said once per burst); an export that fails is counted too; `close` flushes within a bound.
 *
 * Invariant: this module loads OpenTelemetry only when a Telemetry is made, and serve makes one
 * only with an endpoint (proxy/telemetry/settings.ts); nothing here throws into a step.
 */
import type { Span, Tracer } from '@opentelemetry/api'
import type { TracerProvider } from '@opentelemetry/sdk-trace'
import type { SpanFacts } from '../record/span'
import type { TelemetrySettings } from './settings'
import type { Logger } from '../process/log'
import { packageVersion } from '../process/package-root'

export type { TelemetrySettings } from './settings'

/** What `/_holdfast/health` says of the export. */
export interface TelemetryHealth {
  endpoint: string
  protocol: TelemetrySettings['protocol']
  /** Spans the backend took. */
  exported: number
  /** Spans dropped because the queue was full (`OTEL_BSP_MAX_QUEUE_SIZE`). */
  dropped: number
  /** Spans in exports that failed (the backend down, refusing, or too slow). */
  failed: number
}

/** The SDK's own count of what its processor finished, with `error.type` on the ones it lost. */
const PROCESSED = 'otel.sdk.processor.span.processed'

/* eslint-disable @typescript-eslint/no-require-imports -- loaded only with an endpoint */

/** A keep-alive agent for the traces URL's scheme, with the TLS files the variables name. */
function agentFor(protocol: string, tls: TelemetrySettings['tls']): import('node:http').Agent {
  if (protocol === 'http:')
    return new (require('node:http') as typeof import('node:http')).Agent({ keepAlive: true })
  const fs = require('node:fs') as typeof import('node:fs')
  const read = (f: string | undefined): Buffer | undefined => (f ? fs.readFileSync(f) : undefined)
  return new (require('node:https') as typeof import('node:https')).Agent({
    keepAlive: true,
    ca: read(tls.ca),
    cert: read(tls.cert),
    key: read(tls.key),
  })
}
export class Telemetry {
  readonly capture: boolean
  readonly semconv: TelemetrySettings['semconv']
  private readonly provider: TracerProvider
  private readonly tracer: Tracer
  private readonly api: typeof import('@opentelemetry/api')
  private readonly core: typeof import('@opentelemetry/core')
  private readonly counts = { exported: 0, dropped: 0, failed: 0 }
  /** Spans lost since the last export that went through (a burst is said once). */
  private lost = 0

  constructor(
    private readonly settings: TelemetrySettings,
    private readonly log: Logger,
  ) {
    this.capture = settings.captureContent
    this.semconv = settings.semconv
    const api = (this.api = require('@opentelemetry/api') as typeof import('@opentelemetry/api'))
    this.core = require('@opentelemetry/core') as typeof import('@opentelemetry/core')
    const sdk = require('@opentelemetry/sdk-trace') as typeof import('@opentelemetry/sdk-trace')
    const res = require('@opentelemetry/resources') as typeof import('@opentelemetry/resources')
    const { OTLPTraceExporter } = (
      settings.protocol === 'http/json'
        ? require('@opentelemetry/exporter-trace-otlp-http')
        : require('@opentelemetry/exporter-trace-otlp-proto')
    ) as typeof import('@opentelemetry/exporter-trace-otlp-proto')
    const exporter = new OTLPTraceExporter({
      url: settings.url,
      headers: settings.headers,
      // The exporter's own agent factory loads node:http by a dynamic import; required here instead.
      httpAgentOptions: (protocol: string) => agentFor(protocol, settings.tls),
    })
    // The processor's self-observation counter (an experimental option of the SDK) is where it
    // says what it dropped and lost; its other instruments stay no-ops.
    const noop = api.createNoopMeter()
    const meter = Object.assign(Object.create(noop) as typeof noop, {
      createCounter: (name: string, options?: object) =>
        name === PROCESSED
          ? { add: (n: number, attrs?: Record<string, unknown>) => this.processed(n, attrs?.['error.type']) }
          : noop.createCounter(name, options),
    })
    const processor = new sdk.BatchSpanProcessor({
      exporter,
      ...settings.batch,
      selfObsMeterProvider: { getMeter: () => meter },
    })
    const version = packageVersion()
    this.provider = new sdk.TracerProvider({
      resource: res
        .defaultResource()
        .merge(
          res.resourceFromAttributes({ 'service.name': settings.serviceName, 'service.version': version }),
        ),
      sampler: new sdk.AlwaysOnSampler(), // every step is a span, whatever a parent sampled
      spanProcessors: [processor],
    })
    this.tracer = this.provider.getTracer('holdfast', version)
  }

  private processed(n: number, error: unknown): void {
    if (error === undefined) {
      this.counts.exported += n
      if (this.lost > 0)
        this.log.info({ lost: this.lost }, `telemetry: exports to ${this.settings.url} go through again`)
      this.lost = 0
      return
    }
    if (error === 'queue_full') this.counts.dropped += n
    else this.counts.failed += n
    if (this.lost === 0)
      this.log.warn(
        { endpoint: this.settings.url, error: String(error) },
        error === 'queue_full'
          ? `telemetry: the span queue is full (OTEL_BSP_MAX_QUEUE_SIZE ${this.settings.batch.maxQueueSize}): spans are dropped until exports catch up (counted in /_holdfast/health)`
          : `telemetry: exporting spans to ${this.settings.url} failed (${String(error)}); they are lost, counted in /_holdfast/health, and the next batch tries again`,
      )
    this.lost += n
  }

  /** End finished step's span into the export queue; `commit`: its commit, once on its branch. */
  emit(facts: SpanFacts, commit?: string): void {
    try {
      const { api } = this
      const p = facts.parent
      const parent = p
        ? api.trace.setSpanContext(api.ROOT_CONTEXT, {
            traceId: p.traceId,
            spanId: p.spanId,
            traceFlags: p.flags,
            isRemote: true,
            ...(p.tracestate ? { traceState: new this.core.TraceState(p.tracestate) } : {}),
          })
        : api.ROOT_CONTEXT
      const span: Span = this.tracer.startSpan(
        facts.name,
        { kind: api.SpanKind.CLIENT, startTime: facts.startMs, attributes: facts.attributes },
        parent,
      )
      if (commit) span.setAttribute('holdfast.commit', commit)
      if (facts.error !== null) span.setStatus({ code: api.SpanStatusCode.ERROR, message: facts.error })
      span.end(facts.endMs)
    } catch (err) {
      this.log.warn({ err: String(err) }, 'telemetry: a span could not be made')
    }
  }

  health(): TelemetryHealth {
    return { endpoint: this.settings.url, protocol: this.settings.protocol, ...this.counts }
  }

  /** Export what is queued now (a backfill keeps its queue under its bound this way). */
  async flush(): Promise<void> {
    await this.provider.forceFlush().catch(() => undefined)
  }

  /** Flush what is queued and stop, waiting at most `ms` (a backend that hangs never holds a shutdown). */
  async close(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined
    const done = await Promise.race([
      this.provider.shutdown().then(
        () => true,
        () => true,
      ),
      new Promise<false>((r) => (timer = setTimeout(() => r(false), ms))),
    ])
    clearTimeout(timer)
    if (!done)
      this.log.warn(
        { endpoint: this.settings.url, ms },
        `telemetry: the last spans were not exported within ${ms} ms; stopping without them`,
      )
  }
}
/* eslint-enable @typescript-eslint/no-require-imports */
