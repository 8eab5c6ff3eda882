/** What the standard OpenTelemetry variables ask of the tracing bootstrap (pure; no OpenTelemetry loaded). */
type Env = Record<string, string | undefined>;

const exporters = (env: Env) =>
  (env.OTEL_TRACES_EXPORTER ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);

/** True when traces are to be exported: an OTLP endpoint, or OTEL_TRACES_EXPORTER=otlp|console; never with `none` or OTEL_SDK_DISABLED=true. */
export function tracingRequested(env: Env): boolean {
  if ((env.OTEL_SDK_DISABLED ?? '').toLowerCase() === 'true') return false;
  const list = exporters(env);
  if (list.includes('none')) return false;
  if (list.some((e) => e === 'otlp' || e === 'console')) return true;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

/** The exporters to build: OTEL_TRACES_EXPORTER (otlp, console), otlp when only an endpoint is set. */
export function tracesExporters(env: Env): Array<'otlp' | 'console'> {
  const list = exporters(env).filter((e): e is 'otlp' | 'console' => e === 'otlp' || e === 'console');
  return list.length ? [...new Set(list)] : ['otlp'];
}

/** OTLP protocol: OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, then OTEL_EXPORTER_OTLP_PROTOCOL; the spec's default is http/protobuf. */
export function otlpProtocol(env: Env): 'http/protobuf' | 'http/json' {
  const p = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf').trim().toLowerCase();
  if (p === 'http/json') return 'http/json';
  if (p === 'http/protobuf') return 'http/protobuf';
  throw new Error(`OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf or http/json (got ${p}; grpc is not bundled: point it at the collector's HTTP port 4318)`);
}

/** The service's name: OTEL_SERVICE_NAME, else the fleet service whose main.js this process runs (services/<name>/dist/main.js). */
export function serviceNameOf(env: Env, entry: string): string {
  if (env.OTEL_SERVICE_NAME) return env.OTEL_SERVICE_NAME;
  const m = /services[\\/]([^\\/]+)[\\/]/.exec(entry);
  return m ? `agw-${m[1]}` : 'agw';
}
