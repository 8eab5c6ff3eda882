/**
 * The tracing bootstrap: the first import of every service's `main.ts`, so the instrumentations are in
 * place before express, grpc-js, pg and ioredis are loaded. It loads nothing unless traces are to be
 * exported (the standard OpenTelemetry variables): `OTEL_EXPORTER_OTLP_ENDPOINT` or
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` set, or `OTEL_TRACES_EXPORTER` set to `otlp` or `console`;
 * `OTEL_TRACES_EXPORTER=none` or `OTEL_SDK_DISABLED=true` turns it off whatever else is set.
 * Off (the default), the OpenTelemetry SDK is never required.
 */
import { tracingRequested } from './settings';

if (tracingRequested(process.env)) {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  (require('./sdk') as typeof import('./sdk')).startTracing(process.env, process.argv[1] ?? '');
}
