/**
 * proxy/telemetry/settings: the standard variables win over holdfast.yaml's `telemetry:` key, an
 * endpoint is what turns telemetry on, and the variables are read as the OpenTelemetry spec writes them.
 */
import { parseHeaderList, telemetrySettings, tracesUrl } from '../../../proxy/telemetry/settings'

test('without an endpoint (or with OTEL_SDK_DISABLED) telemetry is off', () => {
  expect(telemetrySettings(undefined, {})).toBeUndefined()
  expect(telemetrySettings({ capture_content: true }, {})).toBeUndefined()
  expect(telemetrySettings({ endpoint: 'http://x:4318' }, { OTEL_SDK_DISABLED: 'true' })).toBeUndefined()
})

test('a base endpoint gets /v1/traces; the traces endpoint variable is taken as it is', () => {
  expect(tracesUrl('https://cloud.langfuse.com/api/public/otel')).toBe(
    'https://cloud.langfuse.com/api/public/otel/v1/traces',
  )
  expect(tracesUrl('http://x:4318/')).toBe('http://x:4318/v1/traces')
  expect(tracesUrl('http://x:4318/v1/traces')).toBe('http://x:4318/v1/traces')
  expect(telemetrySettings(undefined, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://t/custom' })?.url).toBe(
    'http://t/custom',
  )
})

test('the variables win over holdfast.yaml, key by key', () => {
  const s = telemetrySettings(
    {
      endpoint: 'http://yaml:4318',
      protocol: 'http/json',
      headers: { a: 'yaml', b: 'yaml' },
      semconv: 'stable',
    },
    {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://env:4318',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_EXPORTER_OTLP_HEADERS: 'b=env,c=en%20v',
      OTEL_SERVICE_NAME: 'my-proxy',
      OTEL_SEMCONV_STABILITY_OPT_IN: 'http,gen_ai_latest_experimental',
      OTEL_BSP_MAX_QUEUE_SIZE: '10',
      OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '100',
    },
  )
  expect(s).toMatchObject({
    url: 'http://env:4318/v1/traces',
    protocol: 'http/protobuf',
    headers: { a: 'yaml', b: 'env', c: 'en v' },
    serviceName: 'my-proxy',
    semconv: 'latest',
    captureContent: false,
    batch: {
      maxQueueSize: 10,
      maxExportBatchSize: 10,
      scheduledDelayMillis: 5000,
      exportTimeoutMillis: 30000,
    },
  })
})

test('holdfast.yaml alone configures it, and an unsupported protocol is said, not taken', () => {
  const s = telemetrySettings(
    { endpoint: 'http://yaml:4318', protocol: 'http/json', capture_content: true },
    { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' },
  )
  expect(s).toMatchObject({ url: 'http://yaml:4318/v1/traces', protocol: 'http/json', captureContent: true })
  expect(s?.warnings.join()).toContain('grpc')
  expect(s?.serviceName).toBe('holdfast')
})

test('a header list skips pairs without a name or an equals sign', () => {
  expect(parseHeaderList('Authorization=Basic%20abc, x=1,=no,bare')).toEqual({
    Authorization: 'Basic abc',
    x: '1',
  })
  expect(parseHeaderList(undefined)).toEqual({})
})
