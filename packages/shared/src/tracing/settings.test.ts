import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { otlpProtocol, serviceNameOf, tracesExporters, tracingRequested } from './settings';

describe('tracing settings (the standard OTEL_* variables)', () => {
  it('is off unless an OTLP endpoint or an exporter is named; none and OTEL_SDK_DISABLED win', () => {
    expect(tracingRequested({})).toBe(false);
    expect(tracingRequested({ OTEL_SERVICE_NAME: 'x' })).toBe(false);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(true);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' })).toBe(true);
    expect(tracingRequested({ OTEL_TRACES_EXPORTER: 'console' })).toBe(true);
    expect(tracingRequested({ OTEL_TRACES_EXPORTER: 'otlp' })).toBe(true);
    expect(tracingRequested({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(false);
    expect(tracingRequested({ OTEL_SDK_DISABLED: 'true', OTEL_TRACES_EXPORTER: 'otlp' })).toBe(false);
  });

  it('builds otlp by default, console when asked, and only the HTTP protocols', () => {
    expect(tracesExporters({ OTEL_EXPORTER_OTLP_ENDPOINT: 'x' })).toEqual(['otlp']);
    expect(tracesExporters({ OTEL_TRACES_EXPORTER: 'console, otlp,otlp' })).toEqual(['console', 'otlp']);
    expect(otlpProtocol({})).toBe('http/protobuf');
    expect(otlpProtocol({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })).toBe('http/json');
    expect(otlpProtocol({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' })).toBe('http/protobuf');
    expect(() => otlpProtocol({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(/http\/protobuf or http\/json/);
  });

  it('names the service after its main module unless OTEL_SERVICE_NAME says otherwise', () => {
    expect(serviceNameOf({}, '/app/services/policy/dist/main.js')).toBe('agw-policy');
    expect(serviceNameOf({ OTEL_SERVICE_NAME: 'policy-eu' }, '/app/services/policy/dist/main.js')).toBe('policy-eu');
    expect(serviceNameOf({}, '/somewhere/else.js')).toBe('agw');
  });

  it('loads no part of the OpenTelemetry SDK when off, and the SDK with its hooks when on', () => {
    const register = path.resolve(__dirname, '../../dist/tracing/register.js');
    const probe = (env: Record<string, string>) => {
      const code = `require(${JSON.stringify(register)}); require(${JSON.stringify(path.resolve(__dirname, '../../dist/index.js'))});
        const sdk = Object.keys(require.cache).filter((k) => /@opentelemetry[\\\\/](sdk-|instrumentation|exporter-)/.test(k)).length;
        console.log(JSON.stringify({ sdk, hooks: Boolean(require(${JSON.stringify(path.resolve(__dirname, '../../dist/index.js'))}).traceHooks.current) }));`;
      const env0 = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OTEL_'))) as Record<string, string>;
      const r = spawnSync(process.execPath, ['-e', code], { env: { ...env0, ...env }, encoding: 'utf8' });
      return JSON.parse(r.stdout.trim().split('\n').pop()!);
    };
    expect(probe({})).toEqual({ sdk: 0, hooks: false });
    const on = probe({ OTEL_TRACES_EXPORTER: 'console', OTEL_BSP_SCHEDULE_DELAY: '60000' });
    expect(on.hooks).toBe(true);
    expect(on.sdk).toBeGreaterThan(0);
  });
});
