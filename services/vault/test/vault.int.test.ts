/**
 * Credentials, brokered execution and PII protection of the vault (its definition started in-process,
 * test/support/start-vault.ts) against the real Postgres and SoftHSM2 token.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger } from '@agw/shared';
import { sql } from 'kysely';
import { BrokeredExecutor } from '../src/broker/brokered-executor';
import { TargetGuard } from '../src/broker/target-guard';
import { credentialsKeyId, subjectKeyId } from '../src/keys/keyring';
import { ERASED_PLACEHOLDER } from '../src/pii/pii-envelope';
import type { VaultApi } from '../src/vault.service';
import { type StartedVault, startVault } from './support/start-vault';

let vault: StartedVault;
let v: VaultApi;
let server: http.Server;
let upstream: string;
const hits: Array<{ headers: http.IncomingHttpHeaders; body: string; url: string }> = [];

beforeAll(async () => {
  // the local profile allows private upstreams over plain HTTP (this test's upstream is a loopback server)
  vault = await startVault({ env: { VAULT_UPSTREAM_MAX_BYTES: String(64 * 1024), VAULT_UPSTREAM_TIMEOUT_MS: '1500' } });
  v = vault.api;
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      hits.push({ headers: req.headers, body: Buffer.concat(chunks).toString(), url: req.url ?? '' });
      if (req.url === '/slow') return void setTimeout(() => res.end('late'), 5000).unref();
      if (req.url === '/big') return void res.end('y'.repeat(100 * 1024));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true, auth: req.headers.authorization ?? null }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  upstream = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
  await vault?.close();
});

/** Every row of every vault table as text: the plaintext must appear nowhere. */
async function vaultTablesText(): Promise<string> {
  const rows = await sql<{ t: string }>`
    SELECT string_agg(x::text, ' ') AS t FROM (
      SELECT row_to_json(k)::text AS x FROM vault_keys k UNION ALL
      SELECT row_to_json(c)::text FROM vault_credentials c UNION ALL
      SELECT row_to_json(a)::text FROM vault_credential_access a UNION ALL
      SELECT row_to_json(s)::text FROM vault_subjects s UNION ALL
      SELECT row_to_json(sa)::text FROM vault_subject_actions sa
    ) q`.execute(v.db);
  return rows.rows[0]?.t ?? '';
}

describe('credentials', () => {
  test('the value is sealed by the tenant key (HSM) before it reaches Postgres and opens only with the right AAD', async () => {
    const tenant = randomUUID();
    const value = `tok-${randomBytes(16).toString('hex')}`;
    const meta = await v.credentials.register(tenant, { tool_id: 'svc_a', name: 'main', value, credential_type: 'bearer', upstream_url: `${upstream}/a` });
    expect(meta).toMatchObject({ tool_id: 'svc_a', name: 'main', credential_type: 'bearer', key_id: credentialsKeyId(tenant) });
    expect(JSON.stringify(meta)).not.toContain(value);
    expect(await vaultTablesText()).not.toContain(value);
    const row = (await v.credentials.forTool(tenant, 'svc_a'))!;
    expect(await v.credentials.open(tenant, row)).toBe(value);
    // the same ciphertext under another tenant's name does not open
    await expect(v.credentials.open(randomUUID(), row)).rejects.toThrow();
    expect(await v.credentials.forTool(randomUUID(), 'svc_a')).toBeUndefined();
  });

  test('validation errors name the field', async () => {
    const t = randomUUID();
    await expect(v.credentials.register(t, { tool_id: 'x', name: 'n', value: 'v', credential_type: 'oauth' })).rejects.toMatchObject({ detail: [expect.objectContaining({ loc: ['credential_type'] })] });
    await expect(v.credentials.register(t, { tool_id: 'x', name: 'n', value: 'v', upstream_url: 'gopher://x' })).rejects.toMatchObject({ detail: [expect.objectContaining({ loc: ['upstream_url'] })] });
    await expect(v.credentials.register(t, { tool_id: 'x', name: 'n', value: 'a\r\nb' })).rejects.toMatchObject({ detail: [expect.objectContaining({ loc: ['value'] })] });
    await expect(v.credentials.delete(t, 'x', 'n')).rejects.toMatchObject({ code: 'not_found' });
  });
});

describe('brokered execution', () => {
  test('injects the credential, returns status and body, and logs the use', async () => {
    const tenant = randomUUID();
    const value = `tok-${randomBytes(16).toString('hex')}`;
    await v.credentials.register(tenant, { tool_id: 'svc_b', name: 'b', value, credential_type: 'bearer', upstream_url: `${upstream}/echo` });
    const actionId = randomUUID();
    const out = await v.broker.execute(tenant, { actionId, agentId: 'agent-7', tool: 'svc_b', method: 'get', params: { q: 1 }, origin: 'tool_call' });
    expect(out).toMatchObject({ brokered: true, statusCode: 200, credentialName: 'b', outcome: 'executed' });
    // the upstream echoed the secret: masked before it leaves the vault
    expect(out.body).toEqual({ ok: true, auth: 'Bearer [redacted]' });
    expect(hits.at(-1)!.headers.authorization).toBe(`Bearer ${value}`);
    expect(out.hsmFetchMs).toBeGreaterThanOrEqual(0);
    const log = await v.accessLog.list(tenant, { limit: 10 });
    expect(log).toEqual([expect.objectContaining({ agent_id: 'agent-7', tool_id: 'svc_b', credential_name: 'b', action_id: actionId, outcome: 'executed', status_code: 200 })]);
    expect(await vaultTablesText()).not.toContain(value);
  });

  test('an approved action is executed with its stored params opened; erased subjects reach the upstream as "[erased]"', async () => {
    const tenant = randomUUID();
    await v.credentials.register(tenant, { tool_id: 'svc_mail', name: 'm', value: 'secret-mail', credential_type: 'bearer', upstream_url: `${upstream}/mail` });
    const email = `h.${randomUUID().slice(0, 6)}@example.com`;
    const actionId = randomUUID();
    const { storedParams, subjectIds } = await v.pii.protect(tenant, actionId, { to: email, subject: 'hello' });
    const run = () => v.broker.execute(tenant, { actionId, agentId: 'a', tool: 'svc_mail', method: 'send', params: storedParams, origin: 'approval' });
    expect(await run()).toMatchObject({ brokered: true, statusCode: 200 });
    expect(JSON.parse(hits.at(-1)!.body)).toEqual({ to: email, subject: 'hello' });
    await v.subjects.erase(tenant, subjectIds[0]);
    await run();
    expect(JSON.parse(hits.at(-1)!.body)).toEqual({ to: ERASED_PLACEHOLDER, subject: 'hello' });
    expect((await v.accessLog.list(tenant, { limit: 5 })).map((e) => e.origin)).toEqual(['approval', 'approval']);
  });

  test('no credential: not brokered, nothing logged', async () => {
    const tenant = randomUUID();
    const out = await v.broker.execute(tenant, { actionId: randomUUID(), agentId: 'a', tool: 'svc_none', method: 'm', params: {}, origin: 'tool_call' });
    expect(out.brokered).toBe(false);
    expect(await v.accessLog.list(tenant, { limit: 10 })).toEqual([]);
  });

  test('timeouts, size cap, missing upstream and blocked targets are outcomes, not crashes', async () => {
    const tenant = randomUUID();
    const run = (tool: string) => v.broker.execute(tenant, { actionId: randomUUID(), agentId: 'a', tool, method: 'm', params: {}, origin: 'tool_call' });
    await v.credentials.register(tenant, { tool_id: 'slow', name: 's', value: 'secret-1', credential_type: 'bearer', upstream_url: `${upstream}/slow` });
    await v.credentials.register(tenant, { tool_id: 'big', name: 'b', value: 'secret-2', credential_type: 'bearer', upstream_url: `${upstream}/big` });
    await v.credentials.register(tenant, { tool_id: 'nowhere', name: 'n', value: 'secret-3', credential_type: 'bearer' });
    expect(await run('slow')).toMatchObject({ statusCode: 504, outcome: 'timeout' });
    expect(await run('big')).toMatchObject({ statusCode: 502, outcome: 'too_large' });
    expect(await run('nowhere')).toMatchObject({ statusCode: 502, outcome: 'no_upstream' });

    // the same credential through a broker whose guard refuses private upstreams (as in production): loopback is
    // refused at call time (a second vault in this process would end the PKCS#11 library's session when closed)
    const strict = new BrokeredExecutor({ credentials: v.credentials, accessLog: v.accessLog, pii: v.pii, guard: new TargetGuard({ allowPrivate: false, requireHttps: false }), timeoutMs: 1500, maxBytes: 64 * 1024, logger: createLogger('test', 'silent') });
    expect(await strict.execute(tenant, { actionId: randomUUID(), agentId: 'a', tool: 'slow', method: 'm', params: {}, origin: 'tool_call' })).toMatchObject({
      statusCode: 502,
      outcome: 'blocked',
    });
    expect((await v.accessLog.list(tenant, { limit: 10 })).map((e) => e.outcome).sort()).toEqual(['blocked', 'no_upstream', 'timeout', 'too_large']);
  });
});

describe('PII protection', () => {
  test('protect -> envelopes per subject; reveal -> plaintext; erase -> key destroyed, "[erased]", irreversible', async () => {
    const tenant = randomUUID();
    const actionId = randomUUID();
    const email = `grace.${randomUUID().slice(0, 6)}@example.com`;
    const params = { contact: { name: 'Grace Hopper', email }, other: { email: `x.${email}` }, amount: 5, tags: ['a'] };
    const r = await v.pii.protect(tenant, actionId, params);
    expect(r.piiDetected).toBe(true);
    expect(r.kinds).toEqual(['email', 'named_field']);
    expect(r.subjectIds).toHaveLength(2);
    const stored = r.storedParams as any;
    expect(stored.amount).toBe(5);
    expect(stored.tags).toEqual(['a']);
    const subject = stored.contact.email.$pii.subject;
    expect(stored.contact.name.$pii.subject).toBe(subject);
    expect(stored.other.email.$pii.subject).not.toBe(subject);
    expect(JSON.stringify(stored)).not.toContain(email);
    expect(await vaultTablesText()).not.toContain(email);
    // params are not mutated
    expect(params.contact.email).toBe(email);

    // the same identifier in another tenant is another subject (tenant-scoped keyed hash)
    const elsewhere = await v.pii.protect(randomUUID(), randomUUID(), { email });
    expect(elsewhere.subjectIds[0]).not.toBe(subject);
    expect((await v.subjects.lookup(tenant, email.toUpperCase())).subject_id).toBe(subject);

    expect((await v.pii.reveal(tenant, stored)).params).toEqual(params);
    // another tenant cannot open them
    await expect(v.pii.reveal(randomUUID(), stored)).resolves.toMatchObject({ params: { contact: { email: ERASED_PLACEHOLDER } } });

    const erased = await v.subjects.erase(tenant, subject);
    expect(erased).toMatchObject({ actionIds: [actionId], alreadyErased: false });
    expect(await v.hsm.keyExists(subjectKeyId(tenant, subject))).toBe(false);
    expect((await v.subjects.status(tenant, subject)).keyExists).toBe(false);
    const revealed = await v.pii.reveal(tenant, stored);
    expect(revealed.erasedSubjects).toEqual([subject]);
    expect(revealed.params).toEqual({ ...params, contact: { name: ERASED_PLACEHOLDER, email: ERASED_PLACEHOLDER } });
    expect((await v.subjects.erase(tenant, subject)).alreadyErased).toBe(true);
    await expect(v.subjects.createSubjectKey(tenant, { identifier: email })).rejects.toMatchObject({ code: 'conflict' });
    // later data of an erased subject is not kept
    const later = await v.pii.protect(tenant, randomUUID(), { email });
    expect(later.storedParams).toEqual({ email: { $pii: { v: 1, subject, kind: 'email', erased: true } } });
    await expect(v.subjects.erase(randomUUID(), subject)).rejects.toMatchObject({ code: 'not_found' });
  });

  test('explicit subject fields win; values without identifiers form their own subject; concurrent calls share one key', async () => {
    const tenant = randomUUID();
    const r = await v.pii.protect(tenant, randomUUID(), { subject_id: 'cust-42', note: 'ring +44 20 7946 0958', name: 'Ada' });
    expect(r.storedParams.subject_id).toBe('cust-42');
    expect(r.subjectIds).toEqual(['cust-42']);
    const lone = await v.pii.protect(tenant, randomUUID(), { name: 'Lone Name' });
    expect(lone.subjectIds[0]).toMatch(/^sub_[0-9a-f]{32}$/);
    // an e-mail address as subject_id is not a pseudonym: it is protected like any identifier
    const mail = await v.pii.protect(tenant, randomUUID(), { subject_id: 'someone@example.com' });
    expect((mail.storedParams.subject_id as any).$pii.kind).toBe('email');

    const email = `c.${randomUUID().slice(0, 6)}@example.com`;
    const many = await Promise.all(Array.from({ length: 8 }, () => v.pii.protect(tenant, randomUUID(), { email })));
    expect(new Set(many.map((m) => m.subjectIds[0])).size).toBe(1);
    const keys = (await v.keyring.list(tenant)).filter((k) => k.subject_id === many[0].subjectIds[0]);
    expect(keys).toHaveLength(1);
    for (const m of many) expect((await v.pii.reveal(tenant, m.storedParams)).params).toEqual({ email });
  });

  test('the erasure index counts the actions of the subject; subjects are listed per tenant only', async () => {
    const tenant = randomUUID();
    const email = `d.${randomUUID().slice(0, 6)}@example.com`;
    const a1 = randomUUID();
    const a2 = randomUUID();
    const r = await v.pii.protect(tenant, a1, { email });
    await v.pii.protect(tenant, a2, { to: email });
    const list = await v.subjects.listSubjects(tenant);
    expect(list).toEqual([expect.objectContaining({ subject_id: r.subjectIds[0], action_count: 2, pii_kinds: ['email', 'named_field'], source: 'derived' })]);
    expect(await v.subjects.listSubjects(randomUUID())).toEqual([]);
    expect((await v.subjects.erase(tenant, r.subjectIds[0])).actionIds.sort()).toEqual([a1, a2].sort());
  });
});
