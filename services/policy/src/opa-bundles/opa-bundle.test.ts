/**
 * OPA bundles read and checked as OPA's bundle plugin checks a signed bundle. The bundles are built here with
 * the maintained npm libraries a pipeline without the `opa` binary would use: `tar-stream` (tar) with
 * node:zlib (gzip) for the archive, and `jose` for the JWS of `.signatures.json` (RS256 and ES256 keys made
 * by jose), in OPA's layout (`.manifest`, `data.json`, `*.rego`, `.signatures.json` with
 * `{"signatures": [JWS]}` whose payload lists every file with its SHA-256).
 */
import { createHash } from 'node:crypto';
import { exportSPKI, generateKeyPair } from 'jose';
import { signed, tarGz } from './__tests__/signed-bundle';
import { BundleRefusedError, bundleFileHash, canonicalBundleJson, openOpaBundle } from './opa-bundle';

const POLICY = `package agw.custom

import rego.v1

deny contains "no_wire" if input.tool == "svc_payments_wire"

deny contains "too_much" if input.params.amount > data.config.limit
`;
const TESTS = `package agw.custom_test

import rego.v1
import data.agw.custom

test_wire_denied if {
	"no_wire" in custom.deny with input as {"tool": "svc_payments_wire", "params": {}}
}

test_small_amount_allowed if {
	count(custom.deny) == 0 with input as {"tool": "svc_x", "params": {"amount": 5}} with data.config.limit as 10
}
`;
const FAILING_TEST = `package agw.custom_test

import rego.v1
import data.agw.custom

test_nothing_denied if {
	count(custom.deny) == 0 with input as {"tool": "svc_payments_wire", "params": {}}
}
`;

const base = {
  '.manifest': JSON.stringify({ revision: 'git-3f2a9c1', roots: ['agw'] }, null, 2),
  'data.json': '{ "config": { "limit": 100 } }',
  'agw/policy.rego': POLICY,
  'agw/policy_test.rego': TESTS,
};
let rsa: Awaited<ReturnType<typeof generateKeyPair>>;
let pem: string;

beforeAll(async () => {
  rsa = await generateKeyPair('RS256');
  pem = await exportSPKI(rsa.publicKey);
});

const refusal = (p: Promise<unknown>) => p.then(() => null, (e: unknown) => e as BundleRefusedError);

test('a signed bundle opens: revision, digest, policy, config, the tests that ran, the key id', async () => {
  const gz = await tarGz(await signed(base, rsa.privateKey, 'RS256'));
  const b = await openOpaBundle(gz, { publicKeyPem: pem, maxBytes: 1 << 20 });
  expect(b).toMatchObject({ revision: 'git-3f2a9c1', digest: createHash('sha256').update(gz).digest('hex'), config: { limit: 100 }, keyId: 'ci-key', policy: { name: 'agw/policy.rego', source: POLICY } });
  expect(b.tests.sort()).toEqual(['data.agw.custom_test.test_small_amount_allowed', 'data.agw.custom_test.test_wire_denied']);
  // an ES256 key too
  const ec = await generateKeyPair('ES256');
  const ok = await openOpaBundle(await tarGz(await signed(base, ec.privateKey, 'ES256')), { publicKeyPem: await exportSPKI(ec.publicKey), maxBytes: 1 << 20 });
  expect(ok.revision).toBe('git-3f2a9c1');
});

test('JSON files are hashed by content, not by their bytes (whitespace and key order do not count)', () => {
  expect(canonicalBundleJson(JSON.parse('{ "b": [1, {"y": "<&>", "x": true}], "a": null }'))).toBe('{"a":null,"b":[1,{"x":true,"y":"\\u003c\\u0026\\u003e"}]}');
  expect(bundleFileHash('data.json', Buffer.from('{"a": 1, "b": 2}'), 'SHA-256')).toBe(bundleFileHash('data.json', Buffer.from('{\n "b": 2,\n "a": 1\n}'), 'SHA-256'));
  expect(bundleFileHash('p.rego', Buffer.from('x'), 'SHA-256')).toBe(createHash('sha256').update('x').digest('hex'));
});

test('refused: unsigned, another key, a changed file, a file not signed, a signed file missing, a scope not registered', async () => {
  const opts = { publicKeyPem: pem, maxBytes: 1 << 20 };
  expect(await refusal(openOpaBundle(await tarGz(base), opts))).toMatchObject({ reason: 'unsigned' });
  const other = await generateKeyPair('RS256');
  expect(await refusal(openOpaBundle(await tarGz(await signed(base, other.privateKey, 'RS256')), opts))).toMatchObject({ reason: 'bad_signature' });
  const good = await signed(base, rsa.privateKey, 'RS256');
  expect(await refusal(openOpaBundle(await tarGz({ ...good, 'agw/policy.rego': POLICY.replace('no_wire', 'no_wir') }), opts))).toMatchObject({ reason: 'hash_mismatch', message: 'agw/policy.rego: its content is not the signed content' });
  expect(await refusal(openOpaBundle(await tarGz({ ...good, 'agw/extra.rego': 'package agw.extra\n' }), opts))).toMatchObject({ reason: 'files_mismatch' });
  const { 'data.json': _drop, ...withoutData } = good;
  expect(await refusal(openOpaBundle(await tarGz(withoutData), opts))).toMatchObject({ reason: 'files_mismatch', message: expect.stringContaining('signed but absent: data.json') });
  const scoped = await signed(base, rsa.privateKey, 'RS256', { claims: { scope: 'write' } });
  expect(await refusal(openOpaBundle(await tarGz(scoped), opts))).toMatchObject({ reason: 'bad_signature' });
  expect((await openOpaBundle(await tarGz(scoped), { ...opts, scope: 'write' })).revision).toBe('git-3f2a9c1');
  expect(await refusal(openOpaBundle(Buffer.from('not gzip'), opts))).toMatchObject({ reason: 'malformed' });
});

test('refused: a bundle whose tests fail (their names given), and one without a policy of package agw.custom', async () => {
  const opts = { publicKeyPem: pem, maxBytes: 1 << 20 };
  const e = await refusal(openOpaBundle(await tarGz(await signed({ ...base, 'agw/more_test.rego': FAILING_TEST }, rsa.privateKey, 'RS256')), opts));
  expect(e).toMatchObject({ reason: 'tests_failed', failingTests: ['data.agw.custom_test.test_nothing_denied'] });
  const { 'agw/policy.rego': _p, ...noPolicy } = base;
  expect(await refusal(openOpaBundle(await tarGz(await signed(noPolicy, rsa.privateKey, 'RS256')), opts))).toMatchObject({ reason: 'no_policy' });
});
