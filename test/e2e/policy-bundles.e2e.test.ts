/**
 * E2E: a tenant's signed OPA bundles, through the public API (docs/policy.md, "OPA bundles"). The bundle
 * server is a local static HTTPS server with an ETag (304 for a matching If-None-Match) on loopback, which
 * the e2e fleet's egress rules allow (POLICY_BUNDLE_ALLOW_CIDRS, its certificate trusted through
 * POLICY_BUNDLE_CA_FILE, as the webhook tests do). The bundles are built here without the `opa` binary, in
 * OPA's layout, with the maintained npm libraries `tar-stream` (tar, gzipped with node:zlib) and `jose`
 * (the RS256 JWS of `.signatures.json`, its payload listing every file's SHA-256, JSON files by content).
 * Shown: a new revision is picked up; a bad signature is refused; failing tests block activation; the
 * bundle's revision and digest appear in the audit records; refusals are control_plane records and
 * `policy.changed` events.
 */
import { createHash } from 'node:crypto';
import type http from 'node:http';
import https from 'node:https';
import type net from 'node:net';
import { gzipSync } from 'node:zlib';
import { CompactSign, exportSPKI, generateKeyPair } from 'jose';
import { pack } from 'tar-stream';
import { api, call, eventually, patientTenant } from './support/api';
import { trustedReceiverCert } from './support/webhook-receiver-cert';

jest.setTimeout(180_000);

const closers: Array<() => Promise<void>> = [];
afterAll(async () => {
  await Promise.all(closers.map((c) => c()));
});

/** Compact JSON with ordered keys (and <, >, & escaped as Go writes them): how OPA hashes JSON files. */
function canonical(v: unknown): string {
  const str = (s: string) => JSON.stringify(s).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026');
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') return `{${Object.keys(v).sort().map((k) => `${str(k)}:${canonical((v as Record<string, unknown>)[k])}`).join(',')}}`;
  return typeof v === 'string' ? str(v) : JSON.stringify(v);
}
const fileHash = (name: string, content: string) => createHash('sha256').update(name.endsWith('.json') || name === '.manifest' ? canonical(JSON.parse(content)) : content).digest('hex');

async function tarGz(files: Record<string, string>): Promise<Buffer> {
  const p = pack();
  const chunks: Buffer[] = [];
  p.on('data', (c: unknown) => chunks.push(c as Buffer));
  const ended = new Promise<void>((r) => p.on('end', () => r()));
  for (const [name, content] of Object.entries(files)) p.entry({ name: `/${name}` }, content);
  p.finalize();
  await ended;
  return gzipSync(Buffer.concat(chunks));
}

type Key = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
async function signedBundle(files: Record<string, string>, key: Key): Promise<Buffer> {
  const listed = Object.entries(files).map(([name, c]) => ({ name, hash: fileHash(name, c), algorithm: 'SHA-256' }));
  const jws = await new CompactSign(Buffer.from(JSON.stringify({ files: listed, iss: 'ci' }))).setProtectedHeader({ alg: 'RS256', kid: 'ci' }).sign(key);
  return tarGz({ ...files, '.signatures.json': JSON.stringify({ signatures: [jws] }) });
}

const bundle = (revision: string, denied: string, testedTool = denied) => ({
  '.manifest': JSON.stringify({ revision, roots: ['agw'] }),
  'data.json': JSON.stringify({ config: { denied_tool: denied } }),
  'agw/policy.rego': `package agw.custom

import rego.v1

deny contains "tool_denied" if input.tool == data.config.denied_tool
`,
  'agw/policy_test.rego': `package agw.custom_test

import rego.v1
import data.agw.custom

test_denied_tool if {
	"tool_denied" in custom.deny with input as {"tool": "${testedTool}"}
}
`,
});

test('signed bundles from a bundle server: picked up with their revision and digest in the audit records; bad signatures and failing tests refused, the live policy staying', async () => {
  const cert = trustedReceiverCert(); // one certificate for both servers: the file the fleet trusts holds it
  const hooks: Array<{ headers: http.IncomingHttpHeaders; json: any }> = [];
  const state = { current: Buffer.alloc(0) as Buffer, requests: [] as Array<{ ifNoneMatch?: string; status: number }> };
  const server = https.createServer(cert, (req, res) => {
    if (req.url === '/hooks') {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        hooks.push({ headers: req.headers, json: JSON.parse(body) });
        res.writeHead(200).end();
      });
      return;
    }
    const etag = `"${createHash('sha256').update(state.current).digest('hex').slice(0, 32)}"`;
    const status = req.headers['if-none-match'] === etag ? 304 : 200;
    state.requests.push({ ifNoneMatch: req.headers['if-none-match'], status });
    if (status === 304) return res.writeHead(304, { etag }).end();
    res.writeHead(200, { etag, 'content-type': 'application/gzip' }).end(state.current);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(() => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))));
  const origin = `https://127.0.0.1:${(server.address() as net.AddressInfo).port}`;

  const t = await patientTenant('Bundles');
  expect((await api('PATCH', '/dashboard/settings', { key: t.apiKey, body: { webhook_url: `${origin}/hooks`, webhook_events: ['policy.changed'] } })).status).toBe(200);
  const keys = await generateKeyPair('RS256');
  const pem = await exportSPKI(keys.publicKey);

  state.current = await signedBundle(bundle('v1.0.0', 'svc_payments_wire'), keys.privateKey);
  const d1 = createHash('sha256').update(state.current).digest('hex');
  const put = await api('PUT', '/policy/bundle-source', { key: t.apiKey, body: { url: `${origin}/bundles/agw.tar.gz`, public_key: pem } });
  expect(put.status).toBe(200);
  expect(put.body).toMatchObject({ poll_outcome: 'activated', last_outcome: 'activated', revision: 'v1.0.0', digest: d1, activation: 'direct', created_by: `api_key:${t.tenantId}` });
  const rev1 = `v1.0.0@sha256:${d1.slice(0, 16)}`;
  expect((await api('GET', '/bundles/gateway/status', { key: t.apiKey })).body).toMatchObject({ revision: rev1, policy_template: 'custom' });

  // the bundle decides, and its revision and digest are in the audit record
  const denied = await call(t.apiKey, { tool: 'svc_payments_wire', method: 'send', params: {} });
  expect(denied.status).toBe(403);
  const allowed = await call(t.apiKey);
  expect(allowed.status).toBe(200);
  const rec = await api('GET', `/audit/actions/${allowed.body.action_id}`, { key: t.apiKey });
  expect(rec.body.records[0]).toMatchObject({ decision: 'allow', bundle_revision: rev1 });

  // the same bundle: 304 to the ETag, nothing changes
  const same = await api('POST', '/policy/bundle-source/poll', { key: t.apiKey });
  expect(same.body.poll_outcome).toBe('unchanged');
  expect(state.requests.at(-1)).toMatchObject({ ifNoneMatch: put.body.etag, status: 304 });

  // signed with another key: refused, the live policy stays
  const other = await generateKeyPair('RS256');
  state.current = await signedBundle(bundle('v1.1.0', 'svc_web_search'), other.privateKey);
  const bad = await api('POST', '/policy/bundle-source/poll', { key: t.apiKey });
  expect(bad.body).toMatchObject({ poll_outcome: 'refused', revision: 'v1.0.0', last_detail: expect.stringMatching(/^bad_signature: /) });
  expect((await call(t.apiKey)).status).toBe(200);
  const refusedHook = await eventually(async () => hooks.find((h) => h.json.data.decision === 'bundle_refused'), 20_000);
  expect(refusedHook.json).toMatchObject({ event: 'policy.changed', data: { tool: 'policy', method: 'bundle.poll', violations: ['bundle_bad_signature'], severity: 'high', details: { reason: 'bad_signature' } } });

  // its tests fail: refused
  state.current = await signedBundle(bundle('v1.2.0', 'svc_web_search', 'svc_other'), keys.privateKey);
  const failing = await api('POST', '/policy/bundle-source/poll', { key: t.apiKey });
  expect(failing.body).toMatchObject({ poll_outcome: 'refused', last_detail: expect.stringMatching(/^tests_failed: .*test_denied_tool: FAIL/) });
  expect((await call(t.apiKey)).status).toBe(200);
  expect((await api('GET', '/bundles/gateway/status', { key: t.apiKey })).body.revision).toBe(rev1);

  // a new good revision is picked up
  state.current = await signedBundle(bundle('v2.0.0', 'svc_web_search'), keys.privateKey);
  const d2 = createHash('sha256').update(state.current).digest('hex');
  const v2 = await api('POST', '/policy/bundle-source/poll', { key: t.apiKey });
  expect(v2.body).toMatchObject({ poll_outcome: 'activated', revision: 'v2.0.0', digest: d2 });
  const now = await call(t.apiKey);
  expect(now.status).toBe(403);
  const wire = await call(t.apiKey, { tool: 'svc_payments_wire', method: 'send', params: {} });
  expect(wire.status).toBe(200);
  expect((await api('GET', `/audit/actions/${wire.body.action_id}`, { key: t.apiKey })).body.records[0].bundle_revision).toBe(`v2.0.0@sha256:${d2.slice(0, 16)}`);
  // the chain holds the activations and the refusals
  const log = await api('GET', '/audit/log?limit=1000', { key: t.apiKey });
  const changes = log.body.records.filter((r: any) => r.source === 'control_plane' && r.tool === 'policy').map((r: any) => r.decision);
  expect(changes.sort()).toEqual(['bundle_activated', 'bundle_activated', 'bundle_refused', 'bundle_refused']);
  expect((await api('GET', '/policy/bundle-source', { key: t.apiKey })).body).toMatchObject({ last_outcome: 'activated', revision: 'v2.0.0' });
  // an http:// URL is refused
  expect((await api('PUT', '/policy/bundle-source', { key: t.apiKey, body: { url: 'http://bundles.example.com/b.tar.gz', public_key: pem } })).status).toBe(422);
  expect((await api('DELETE', '/policy/bundle-source', { key: t.apiKey })).status).toBe(200);
  expect((await api('GET', '/policy/bundle-source', { key: t.apiKey })).status).toBe(404);
});
