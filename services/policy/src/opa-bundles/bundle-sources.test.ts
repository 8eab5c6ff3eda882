/**
 * Integration: a tenant's OPA bundle source polled from a local HTTPS bundle server (a static server with
 * an ETag, `If-None-Match` answered 304) through the egress rules (@agw/egress, loopback allowed as an
 * operator would allow it, the test's certificate trusted), with real Postgres and Redis. The bundles are
 * real signed bundles built with tar-stream and jose (__tests__/signed-bundle.ts). Shown: a bundle is
 * activated and its `.manifest` revision and digest name the revision of every decision; 304 leaves it; a
 * new revision is picked up; a bad signature and failing tests are refused with the live policy staying;
 * activation into shadow; the egress rules refuse a loopback server when it is not allowed.
 */
import { createHash, randomUUID } from 'node:crypto';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { createSecureContext } from 'node:tls';
import { AddressPolicy, createPinnedFetch } from '@agw/egress';
import { type Db, type SelfSignedCert, createLogger, selfSignedCert } from '@agw/shared';
import { exportSPKI, generateKeyPair } from 'jose';
import type { TenantPolicies } from '../bundles/tenant-policies';
import type { PolicyChangeFact, PolicyChangeRecorder } from '../changes/policy-change-recorder';
import type { PolicyEvaluation } from '../decisions/policy-evaluation';
import type { PolicyShadows } from '../shadow/policy-shadows';
import { type StartedPolicy, startPolicy } from '../../test/support/start-policy';
import { signed, tarGz } from './__tests__/signed-bundle';
import { BundleSourceRepository } from './bundle-source.repository';
import { BundleSources } from './bundle-sources';

const logger = createLogger('test', 'silent');

const policy = (denied: string) => `package agw.custom

import rego.v1

deny contains "tool_denied" if input.tool == "${denied}"
`;
const TESTS = `package agw.custom_test

import rego.v1
import data.agw.custom

test_listed_tool_denied if {
	"tool_denied" in custom.deny with input as {"tool": data.config.denied_tool}
}
`;
const bundleFiles = (revision: string, denied: string, extra: Record<string, string> = {}) => ({
  '.manifest': JSON.stringify({ revision, roots: ['agw'] }),
  'data.json': JSON.stringify({ config: { denied_tool: denied } }),
  'agw/policy.rego': policy(denied),
  'agw/policy_test.rego': TESTS,
  ...extra,
});

/** A static bundle server: serves `current` with a strong ETag (its SHA-256), 304 for a matching If-None-Match. */
function bundleServer(cert: { cert: string; key: string }) {
  const state = { current: Buffer.alloc(0) as Buffer, requests: [] as Array<{ ifNoneMatch: string | undefined; status: number }> };
  const server = https.createServer(cert, (req, res) => {
    const etag = `"${createHash('sha256').update(state.current).digest('hex').slice(0, 32)}"`;
    const status = req.headers['if-none-match'] === etag ? 304 : 200;
    state.requests.push({ ifNoneMatch: req.headers['if-none-match'], status });
    if (status === 304) return res.writeHead(304, { etag }).end();
    res.writeHead(200, { etag, 'content-type': 'application/gzip', 'content-length': state.current.length }).end(state.current);
  });
  return { server, state };
}

let started: StartedPolicy;
let db: Db;
let cert: SelfSignedCert;
let srv: ReturnType<typeof bundleServer>;
let base: string;
let keys: Awaited<ReturnType<typeof generateKeyPair>>;
let pem: string;
const facts: Array<{ tenantId: string; fact: PolicyChangeFact }> = [];
const recorder: PolicyChangeRecorder = {
  record: async (tenantId, fact) => {
    facts.push({ tenantId, fact });
    return randomUUID();
  },
};
let policies: TenantPolicies;
let shadows: PolicyShadows;
let evaluation: PolicyEvaluation;
const fetchFor = (allowCidrs: string[]) =>
  createPinnedFetch({ policy: new AddressPolicy({ allowCidrs }), maxResponseBytes: 1 << 20, connectTimeoutMs: 5000, headersTimeoutMs: 5000, secureContext: createSecureContext({ ca: cert.cert }) });
const sourcesWith = (fetch: ReturnType<typeof fetchFor>) => new BundleSources(new BundleSourceRepository(db), policies, shadows, recorder, fetch, logger, { maxBytes: 1 << 20, pollMs: 60_000 });

beforeAll(async () => {
  // the service's policies, shadows and evaluation (each test polls with bundle sources of its own egress rules)
  started = await startPolicy({ env: { POLICY_CACHE_MS: '60000', POLICY_SHADOW_QUEUE_MAX: '100' }, overrides: { recorder } });
  ({ db, policies, shadows, evaluation } = started.api);
  cert = selfSignedCert({ commonName: 'bundles', altNames: ['IP:127.0.0.1'], days: 1 });
  srv = bundleServer(cert);
  await new Promise<void>((r) => srv.server.listen(0, '127.0.0.1', r));
  base = `https://127.0.0.1:${(srv.server.address() as AddressInfo).port}`;
  keys = await generateKeyPair('RS256');
  pem = await exportSPKI(keys.publicKey);
});
afterAll(async () => {
  srv.server.closeAllConnections();
  await new Promise((r) => srv.server.close(r));
  await started?.close();
});

const decide = (tenantId: string, tool: string) =>
  evaluation.evaluate(tenantId, randomUUID(), { agentId: 'a', agentType: 't', agentVersion: '1', tool, method: 'm', params: {}, piiDetected: false, sessionId: '' });
const digestOf = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const factsOf = (tenantId: string) => facts.filter((f) => f.tenantId === tenantId).map((f) => f.fact);

test('activated from the bundle server; 304 leaves it; a new revision is picked up; bad signatures and failing tests are refused and the live policy stays', async () => {
  const tenantId = randomUUID();
  const sources = sourcesWith(fetchFor(['127.0.0.0/8']));
  srv.state.current = await tarGz(await signed(bundleFiles('git-aaa111', 'svc_wire'), keys.privateKey, 'RS256'));
  const d1 = digestOf(srv.state.current);
  const r = await sources.register(tenantId, { url: `${base}/bundles/policy.tar.gz`, publicKeyPem: pem, activation: 'direct' }, 'ci@example.com');
  expect(r.outcome).toBe('activated');
  expect(r.source).toMatchObject({ revision: 'git-aaa111', digest: d1, last_outcome: 'activated', etag: expect.stringMatching(/^"/) });
  const rev1 = `git-aaa111@sha256:${d1.slice(0, 16)}`;
  expect((await policies.active(tenantId)).revision).toBe(rev1);
  // every decision names the bundle's revision and digest
  const denied = await decide(tenantId, 'svc_wire');
  expect(denied).toMatchObject({ decision: 'deny', violations: ['tool_denied'], bundleRevision: rev1 });
  expect(factsOf(tenantId)).toEqual([expect.objectContaining({ decision: 'bundle_activated', actor: `bundle:${base}/bundles/policy.tar.gz`, revision: rev1, details: expect.objectContaining({ manifest_revision: 'git-aaa111', digest: d1, tests: 1 }) })]);

  // unchanged: the server answers 304 to the ETag
  expect(await sources.pollNow(tenantId)).toBe('unchanged');
  expect(srv.state.requests.at(-1)).toMatchObject({ ifNoneMatch: r.source.etag, status: 304 });

  // signed with another key: refused, the live policy stays
  const other = await generateKeyPair('RS256');
  srv.state.current = await tarGz(await signed(bundleFiles('git-bbb222', 'svc_mail'), other.privateKey, 'RS256'));
  expect(await sources.pollNow(tenantId)).toBe('refused');
  expect((await policies.active(tenantId)).revision).toBe(rev1);
  expect(factsOf(tenantId).at(-1)).toMatchObject({ decision: 'bundle_refused', severity: 'high', violations: ['bundle_bad_signature'], details: { reason: 'bad_signature' } });
  // the same refused bundle is not fetched and refused again
  expect(await sources.pollNow(tenantId)).toBe('unchanged');

  // its tests fail: refused, the failing test named
  srv.state.current = await tarGz(await signed(bundleFiles('git-ccc333', 'svc_mail', { 'data.json': JSON.stringify({ config: { denied_tool: 'svc_other' } }) }), keys.privateKey, 'RS256'));
  expect(await sources.pollNow(tenantId)).toBe('refused');
  expect(factsOf(tenantId).at(-1)).toMatchObject({ decision: 'bundle_refused', violations: ['bundle_tests_failed', 'data.agw.custom_test.test_listed_tool_denied'] });
  expect((await decide(tenantId, 'svc_wire')).bundleRevision).toBe(rev1);

  // unsigned: refused
  srv.state.current = await tarGz(bundleFiles('git-ddd444', 'svc_mail'));
  expect(await sources.pollNow(tenantId)).toBe('refused');
  expect(factsOf(tenantId).at(-1)).toMatchObject({ violations: ['bundle_unsigned'] });

  // a new good revision is picked up
  srv.state.current = await tarGz(await signed(bundleFiles('git-eee555', 'svc_mail'), keys.privateKey, 'RS256'));
  const d5 = digestOf(srv.state.current);
  expect(await sources.pollNow(tenantId)).toBe('activated');
  const after = await decide(tenantId, 'svc_mail');
  expect(after).toMatchObject({ decision: 'deny', bundleRevision: `git-eee555@sha256:${d5.slice(0, 16)}` });
  expect((await decide(tenantId, 'svc_wire')).decision).toBe('allow');
  expect((await sources.get(tenantId))!).toMatchObject({ revision: 'git-eee555', digest: d5, last_outcome: 'activated' });
});

test('activation through shadow first: the bundle becomes the candidate, promotion keeps its revision', async () => {
  const tenantId = randomUUID();
  const sources = sourcesWith(fetchFor(['127.0.0.0/8']));
  srv.state.current = await tarGz(await signed(bundleFiles('git-fff666', 'svc_wire'), keys.privateKey, 'RS256'));
  const d = digestOf(srv.state.current);
  const r = await sources.register(tenantId, { url: `${base}/b.tar.gz`, publicKeyPem: pem, activation: 'shadow', shadowMaxCalls: 50 }, 'ci@example.com');
  expect(r.outcome).toBe('shadowed');
  const report = await shadows.report(tenantId);
  expect(report).toMatchObject({ status: 'running', shadow: { revision: `git-fff666@sha256:${d.slice(0, 16)}`, max_calls: 50, started_by: `bundle:${base}/b.tar.gz` } });
  expect((await decide(tenantId, 'svc_wire')).decision).toBe('allow'); // live: the default template
  const promoted = await shadows.promote(tenantId, 'alice@example.com');
  expect(promoted.revision).toBe(`git-fff666@sha256:${d.slice(0, 16)}`);
  expect((await decide(tenantId, 'svc_wire'))).toMatchObject({ decision: 'deny', bundleRevision: promoted.revision });
  // a next bundle while a shadow runs waits for it (not refused), and is taken once the shadow is over
  srv.state.current = await tarGz(await signed(bundleFiles('git-ggg777', 'svc_mail'), keys.privateKey, 'RS256'));
  await shadows.start(tenantId, { template: 'financial' }, {}, 'alice@example.com');
  expect(await sources.pollNow(tenantId)).toBe('waiting');
  await shadows.discard(tenantId, 'alice@example.com');
  expect(await sources.pollNow(tenantId)).toBe('shadowed');
  expect((await shadows.report(tenantId)).shadow!.revision).toMatch(/^git-ggg777@sha256:/);
  expect(factsOf(tenantId).map((f) => f.decision)).toEqual(['shadow_started', 'bundle_shadowed', 'shadow_promoted', 'shadow_started', 'shadow_discarded', 'shadow_started', 'bundle_shadowed']);
});

test('the egress rules apply: a loopback bundle server is refused unless the operator allowed it; bad input is a 422', async () => {
  const tenantId = randomUUID();
  const sources = sourcesWith(fetchFor([]));
  const r = await sources.register(tenantId, { url: `${base}/x.tar.gz`, publicKeyPem: pem, activation: 'direct' }, 'ci@example.com');
  expect(r.outcome).toBe('error');
  expect(r.source.last_detail).toMatch(/refused/);
  expect((await policies.active(tenantId)).template).toBe('general');
  const http = await sources.register(tenantId, { url: 'http://bundles.example.com/b.tar.gz', publicKeyPem: pem, activation: 'direct' }, 'x').catch((e) => e);
  expect(http.detail[0]).toMatchObject({ loc: ['url'] });
  const badKey = await sources.register(tenantId, { url: 'https://bundles.example.com/b.tar.gz', publicKeyPem: 'not a key', activation: 'direct' }, 'x').catch((e) => e);
  expect(badKey.detail[0]).toMatchObject({ loc: ['public_key'] });
});
