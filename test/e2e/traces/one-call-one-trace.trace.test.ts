/**
 * One tool call is one trace, from the edge to the webhook delivery. The fleet runs with tracing on (the
 * standard OTEL_* variables: OTLP over HTTP, JSON encoding) and exports to a receiver in this test, a real
 * OTLP/HTTP endpoint on loopback. A call whose parameters carry personal data (so the vault's PII guard
 * runs) by a tenant with a webhook must yield one trace: the gateway's server span is its only root, the
 * policy, vault, audit and webhook services all have spans in it, every span's parent is in it, the NATS
 * publish and process spans link the audit service to the webhook service, and the webhook request itself
 * carries the trace (W3C traceparent). The pipeline's Server-Timing header stays. A federated tools/call
 * whose client asks for progress runs on the vault's server-streaming ExecuteStream: its gateway client
 * span and vault server span are in the call's trace.
 */
import type { ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type ModernUpstream, startModernUpstream } from '@agw/mcp-fixtures';
import { api, call, eventually, newTenant } from '../support/api';
import { E2E_BASE_URL, E2E_WEBHOOK_CA_FILE } from '../support/e2e-env';
import { startFleet } from '../support/global-setup';
import { stopFleetProcess } from '../support/fleet-process';

interface CollectedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, string | number>;
}

/** OTLP/JSON attribute values: {stringValue} | {intValue} (a string of digits) | … */
const attributesOf = (list: any[] | undefined): Record<string, string | number> =>
  Object.fromEntries((list ?? []).map((a: any) => [a.key, a.value?.stringValue ?? (a.value?.intValue !== undefined ? Number(a.value.intValue) : a.value?.doubleValue ?? a.value?.boolValue)]));

const spans: CollectedSpan[] = [];
let collector: http.Server;
let receiver: https.Server;
const hooks: Array<{ headers: http.IncomingHttpHeaders; json: any }> = [];
let fleet: ChildProcess | undefined;
let upstream: ModernUpstream | undefined;

/** OTLP/HTTP JSON (ExportTraceServiceRequest) to flat spans. */
function collect(body: any): void {
  for (const rs of body.resourceSpans ?? []) {
    const service = rs.resource?.attributes?.find((a: any) => a.key === 'service.name')?.value?.stringValue ?? '?';
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) spans.push({ service, traceId: s.traceId, spanId: s.spanId, parentSpanId: s.parentSpanId ?? '', name: s.name, kind: s.kind, attributes: attributesOf(s.attributes) });
    }
  }
}

beforeAll(async () => {
  collector = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/v1/traces') collect(JSON.parse(Buffer.concat(chunks).toString()));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => collector.listen(0, '127.0.0.1', r));

  const dir = mkdtempSync(path.join(tmpdir(), 'agw-e2e-traces-'));
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2',
    '-subj', '/CN=agw-e2e-webhook-receiver', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1',
    '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem'),
  ], { stdio: 'pipe' });
  const cert = readFileSync(path.join(dir, 'cert.pem'), 'utf8');
  receiver = https.createServer({ cert, key: readFileSync(path.join(dir, 'key.pem'), 'utf8') }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      hooks.push({ headers: req.headers, json: JSON.parse(Buffer.concat(chunks).toString()) });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(path.dirname(E2E_WEBHOOK_CA_FILE), { recursive: true });
  writeFileSync(E2E_WEBHOOK_CA_FILE, cert);

  fleet = await startFleet({
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(collector.address() as AddressInfo).port}`,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_BSP_SCHEDULE_DELAY: '200',
  });
}, 180_000);

afterAll(async () => {
  await stopFleetProcess(fleet);
  await upstream?.close();
  receiver?.closeAllConnections();
  await new Promise((r) => receiver?.close(r));
  collector?.closeAllConnections();
  await new Promise((r) => collector?.close(r));
});

test('one tool call is one connected trace through gateway, policy, vault, audit, the bus and the webhook delivery', async () => {
  const t = await newTenant('Traces');
  const url = `https://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/agw`;
  const s = await api('PATCH', '/dashboard/settings', { key: t.apiKey, body: { webhook_url: url, webhook_events: ['action.allowed', 'action.denied', 'action.pending'] } });
  expect(s.status).toBe(200);

  const r = await call(t.apiKey, { tool: 'svc_crm_update', method: 'update', agent_id: 'trace-agent', params: { customer: { email: 'ada.trace@example.com' }, note: 'traced' } });
  expect(r.status).toBe(200);
  expect(r.headers.get('server-timing')).toMatch(/policy;dur=/);
  const actionId = r.body.action_id;

  // the webhook request carries the trace: its traceparent names the call's trace
  const hook = await eventually(async () => hooks.find((h) => h.json.data?.action_id === actionId), 40_000);
  const traceparent = String(hook.headers.traceparent ?? '');
  expect(traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/);
  const traceId = traceparent.split('-')[1];

  const inTrace = () => spans.filter((x) => x.traceId === traceId);
  const services = ['agw-gateway', 'agw-policy', 'agw-vault', 'agw-audit', 'agw-webhook'];
  await eventually(async () => {
    const got = inTrace();
    const ids = new Set(got.map((x) => x.spanId));
    // every service has a span, the webhook request's span (the traceparent's parent) arrived, and every parent is in
    return services.every((name) => got.some((x) => x.service === name)) && ids.has(traceparent.split('-')[2]) && got.every((x) => !x.parentSpanId || ids.has(x.parentSpanId));
  }, 30_000);

  const trace = inTrace();
  if (process.env.TRACE_DUMP) writeFileSync(process.env.TRACE_DUMP, JSON.stringify(trace, null, 1));
  const ids = new Set(trace.map((x) => x.spanId));
  // one root: the gateway's server span of the call
  const roots = trace.filter((x) => !x.parentSpanId);
  expect(roots).toHaveLength(1);
  expect(roots[0]).toMatchObject({ service: 'agw-gateway', kind: 2 /* SERVER */ });
  // named by its route (the edge serves it outside express: http/governed-edge.ts names it as express's instrumentation would)
  expect(roots[0].name).toBe('POST /api/mcp/tools/call');
  // connected: every other span's parent is a span of the same trace
  for (const x of trace) if (x.parentSpanId) expect(ids.has(x.parentSpanId)).toBe(true);

  const byId = new Map(trace.map((x) => [x.spanId, x]));
  const ancestors = (x: CollectedSpan) => {
    const out: CollectedSpan[] = [];
    for (let p = byId.get(x.parentSpanId); p; p = byId.get(p.parentSpanId)) out.push(p);
    return out;
  };
  // the governed call as a GenAI tool execution (OpenTelemetry semantic conventions), leading to its record and proof
  const tool = trace.find((x) => x.service === 'agw-gateway' && x.name === 'execute_tool svc_crm_update');
  expect(tool).toMatchObject({ kind: 1 /* INTERNAL */ });
  expect(tool!.attributes).toMatchObject({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'svc_crm_update', 'gen_ai.tool.call.id': actionId, 'gen_ai.agent.id': 'trace-agent', 'agw.decision': 'allowed' });
  const receiptNote: string = r.body.receipt.note;
  expect(tool!.attributes['agw.audit.record_id']).toBe(Number(/^record (\d+)$/m.exec(receiptNote)![1]));
  expect(tool!.attributes['agw.receipt.leaf_hash']).toBe(Buffer.from(/^leaf (\S+)$/m.exec(receiptNote)![1], 'base64').toString('hex'));
  // gRPC server spans of policy, vault and audit, each under a gateway span
  for (const name of ['agw-policy', 'agw-vault', 'agw-audit']) {
    const server = trace.find((x) => x.service === name && x.kind === 2);
    expect({ name, server: server?.name }).toEqual({ name, server: expect.any(String) });
    expect(ancestors(server!).some((a) => a.service === 'agw-gateway')).toBe(true);
  }
  // the decision event crossed NATS inside the trace: audit publishes (PRODUCER), webhook processes (CONSUMER) under it
  const publish = trace.find((x) => x.name === 'nats publish' && x.kind === 4);
  const consume = trace.find((x) => x.name === 'nats process' && x.kind === 5 && x.service === 'agw-webhook');
  expect(publish).toBeDefined();
  expect(consume).toBeDefined();
  expect(ancestors(consume!).map((a) => a.spanId)).toContain(publish!.spanId);
  // and the delivery (and its HTTPS request, whose span the receiver saw as parent) hangs under the consumer
  const deliver = trace.find((x) => x.name === 'webhook deliver' && x.service === 'agw-webhook');
  expect(deliver).toBeDefined();
  expect(ancestors(deliver!).map((a) => a.spanId)).toContain(consume!.spanId);
  const request = byId.get(traceparent.split('-')[2])!;
  expect(request).toMatchObject({ service: 'agw-webhook', kind: 3 /* CLIENT */ });
  expect(ancestors(request).map((a) => a.spanId)).toContain(deliver!.spanId);
});

test('a federated call that asks for progress: the vault’s ExecuteStream is a gateway client span and a vault server span in its trace', async () => {
  const t = await newTenant('Traces, streamed');
  const url = `https://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/agw`;
  expect((await api('PATCH', '/dashboard/settings', { key: t.apiKey, body: { webhook_url: url, webhook_events: ['action.allowed'] } })).status).toBe(200);
  upstream = await startModernUpstream({ port: 0 });
  expect((await api('POST', '/upstreams', { key: t.apiKey, body: { name: 'modern', url: `${upstream.url}/mcp` } })).body.status).toBe('connected');

  const V = '2026-07-28';
  const res = await fetch(`${E2E_BASE_URL}/mcp/server`, {
    method: 'POST',
    headers: { authorization: `Bearer ${t.apiKey}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': V, 'mcp-method': 'tools/call', 'mcp-name': 'modern__slow' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'modern__slow', arguments: { ms: 100, steps: 2 }, _meta: { 'io.modelcontextprotocol/protocolVersion': V, 'io.modelcontextprotocol/clientInfo': { name: 'e2e-traces', version: '1.0.0' }, 'io.modelcontextprotocol/clientCapabilities': {}, progressToken: 'p-1' } } }),
  });
  expect(res.status).toBe(200);
  // an SSE stream: the progress notifications, then the result
  const messages = (await res.text()).split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)));
  expect(messages.filter((m) => m.method === 'notifications/progress')).toHaveLength(2);
  const result = messages.find((m) => m.id === 1)?.result;
  const actionId = result?._meta?.['io.agw/action_id'];
  expect(actionId).toEqual(expect.any(String));

  const hook = await eventually(async () => hooks.find((h) => h.json.data?.action_id === actionId), 40_000);
  const traceId = String(hook.headers.traceparent ?? '').split('-')[1];
  const name = 'grpc.agw.vault.v1.VaultService/ExecuteStream';
  const [client, server] = await eventually(async () => {
    const got = spans.filter((x) => x.traceId === traceId && x.name === name);
    const c = got.find((x) => x.service === 'agw-gateway' && x.kind === 3 /* CLIENT */);
    const v = got.find((x) => x.service === 'agw-vault' && x.kind === 2 /* SERVER */);
    return c && v ? [c, v] : undefined;
  }, 30_000);
  expect(server.parentSpanId).toBe(client.spanId);
  expect(server.attributes).toMatchObject({ 'rpc.system': 'grpc', 'rpc.service': 'agw.vault.v1.VaultService', 'rpc.method': 'ExecuteStream' });
  // the client span hangs under the call's root (the gateway's server span)
  const byId = new Map(spans.filter((x) => x.traceId === traceId).map((x) => [x.spanId, x]));
  let root = client;
  for (let p = byId.get(root.parentSpanId); p; p = byId.get(p.parentSpanId)) root = p;
  expect(root).toMatchObject({ service: 'agw-gateway', kind: 2, parentSpanId: '' });
});
