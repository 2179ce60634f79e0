/**
 * Where spans go, and how, from the standard OpenTelemetry variables and holdfast.yaml's
 * `telemetry:` key (docs/telemetry.md). Invariant: a variable wins over the key; without an
 * endpoint (or with OTEL_SDK_DISABLED=true) there are no settings, and so nothing of
 * OpenTelemetry is loaded and nothing is tried. Pure: it reads the environment it is given.
 */
import type { HoldfastConfig } from '../../generated/holdfast'

export type Protocol = 'http/protobuf' | 'http/json'

export interface TelemetrySettings {
  /** The traces URL exports are posted to. */
  url: string
  protocol: Protocol
  /** Sent with every export; never put on a span. */
  headers: Record<string, string>
  /** Prompt and answer text on spans (off unless asked). */
  captureContent: boolean
  /** `latest`: the cache-write count as gen_ai.usage.cache_write.input_tokens. */
  semconv: 'stable' | 'latest'
  serviceName: string
  /** The BatchSpanProcessor's bounds (OTEL_BSP_*; the 2.x SDK leaves reading them to its caller). */
  batch: {
    maxQueueSize: number
    maxExportBatchSize: number
    scheduledDelayMillis: number
    exportTimeoutMillis: number
  }
  /** Files of the TLS material the variables name (OTEL_EXPORTER_OTLP_CERTIFICATE, _CLIENT_CERTIFICATE, _CLIENT_KEY). */
  tls: { ca?: string; cert?: string; key?: string }
  /** What was set but not taken (an unsupported protocol), for the log. */
  warnings: string[]
}

type Env = Readonly<Record<string, string | undefined>>

const TRACES_PATH = 'v1/traces'

/** An OTLP base URL with the traces path appended (as OTEL_EXPORTER_OTLP_ENDPOINT is read). */
export function tracesUrl(base: string): string {
  if (/\/v1\/traces\/?$/.test(base)) return base
  return base.endsWith('/') ? base + TRACES_PATH : `${base}/${TRACES_PATH}`
}

/** `k=v,k2=v2` (values percent-decoded), as OTEL_EXPORTER_OTLP_HEADERS is written. */
export function parseHeaderList(text: string | undefined): Record<string, string> {
  const out: Record<string, string> = {}
  for (const pair of (text ?? '').split(',')) {
    const eq = pair.indexOf('=')
    if (eq <= 0) continue
    const name = pair.slice(0, eq).trim()
    let value = pair.slice(eq + 1).trim()
    try {
      value = decodeURIComponent(value)
    } catch {
      // kept as written
    }
    if (name) out[name] = value
  }
  return out
}

const set = (v: string | undefined): string | undefined =>
  v === undefined || v.trim() === '' ? undefined : v.trim()

function positive(env: Env, name: string, fallback: number): number {
  const v = Number(set(env[name]))
  return Number.isFinite(v) && v > 0 ? Math.floor(v) : fallback
}

/** The settings this serve exports with, or undefined: telemetry is off. */
export function telemetrySettings(
  config: HoldfastConfig['telemetry'],
  env: Env = process.env,
): TelemetrySettings | undefined {
  if (set(env.OTEL_SDK_DISABLED)?.toLowerCase() === 'true') return undefined
  const specific = set(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)
  const general = set(env.OTEL_EXPORTER_OTLP_ENDPOINT)
  const url =
    specific ?? (general ? tracesUrl(general) : config?.endpoint ? tracesUrl(config.endpoint) : undefined)
  if (!url) return undefined
  const warnings: string[] = []
  const asked = set(env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL) ?? set(env.OTEL_EXPORTER_OTLP_PROTOCOL)
  let protocol: Protocol = config?.protocol ?? 'http/protobuf'
  if (asked === 'http/protobuf' || asked === 'http/json') protocol = asked
  else if (asked !== undefined)
    warnings.push(
      `OTEL_EXPORTER_OTLP_PROTOCOL=${asked} is not supported (http/protobuf or http/json): using ${protocol}`,
    )
  const capture = set(env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT)?.toLowerCase()
  const optIn = (set(env.OTEL_SEMCONV_STABILITY_OPT_IN) ?? '').split(',').map((s) => s.trim())
  const maxQueueSize = positive(env, 'OTEL_BSP_MAX_QUEUE_SIZE', 2048)
  return {
    url,
    protocol,
    headers: {
      ...(config?.headers ?? {}),
      ...parseHeaderList(env.OTEL_EXPORTER_OTLP_HEADERS),
      ...parseHeaderList(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS),
    },
    captureContent: capture === undefined ? config?.capture_content === true : capture === 'true',
    semconv: optIn.includes('gen_ai_latest_experimental') ? 'latest' : (config?.semconv ?? 'stable'),
    serviceName: set(env.OTEL_SERVICE_NAME) ?? 'holdfast',
    batch: {
      maxQueueSize,
      maxExportBatchSize: Math.min(positive(env, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE', 512), maxQueueSize),
      scheduledDelayMillis: positive(env, 'OTEL_BSP_SCHEDULE_DELAY', 5000),
      exportTimeoutMillis: positive(env, 'OTEL_BSP_EXPORT_TIMEOUT', 30000),
    },
    tls: Object.fromEntries(
      (
        [
          ['ca', 'CERTIFICATE'],
          ['cert', 'CLIENT_CERTIFICATE'],
          ['key', 'CLIENT_KEY'],
        ] as const
      )
        .map(([k, v]) => [
          k,
          set(env[`OTEL_EXPORTER_OTLP_TRACES_${v}`]) ?? set(env[`OTEL_EXPORTER_OTLP_${v}`]),
        ])
        .filter(([, f]) => f !== undefined),
    ) as TelemetrySettings['tls'],
    warnings,
  }
}
