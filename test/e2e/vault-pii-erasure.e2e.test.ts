/**
 * E2E: personal data in tool-call params is encrypted per data subject with an HSM key (SoftHSM2 for
 * real) before anything is stored; erasing the subject destroys the key, the audit chain still verifies
 * and no plaintext remains anywhere (database, Redis, logs). Public HTTP API only.
 */
import { randomUUID } from 'node:crypto';
import { type Tenant, api, call, eventually, fleet, newTenant } from './support/api';
import { logsContaining, redisContaining, tablesContaining } from './support/stores';

jest.setTimeout(90_000);


const record = async (key: string, actionId: string) => {
  const r = await api('GET', '/audit/log?limit=1000', { key });
  return r.body.records.filter((x: { action_id: string }) => x.action_id === actionId);
};

// two tenants for the whole file (signups are rate-limited per address)
let t: Tenant;
let other: Tenant;
beforeAll(async () => {
  t = await newTenant('Vault PII');
  other = await newTenant('Vault PII Other');
});

describe('PII encryption per data subject and crypto-shredding (SoftHSM2)', () => {
  test('PII is stored as per-subject ciphertext; erasure destroys the key, the chain still verifies and the plaintext is gone', async () => {
    const tag = randomUUID().slice(0, 8);
    const email = `ada.${tag}@example.com`;
    const name = `Ada Lovelace ${tag}`;
    const note = `Call Ada about the invoice ${tag}`;
    const params = { customer: { name, email, phone: '+44 20 7946 0958', iban: 'DE89 3704 0044 0532 0130 00' }, card: '4111 1111 1111 1111', note, amount: 120 };

    const r = await call(t.apiKey, { tool: 'svc_crm_update', method: 'update', agent_id: 'pii-agent', params });
    expect(r.status).toBe(200);
    const [rec] = await record(t.apiKey, r.body.action_id);
    expect(rec.details.pii_detected).toBe(true);
    const stored = rec.params;
    // every personal value became an envelope; the rest is untouched
    for (const v of [stored.customer.name, stored.customer.email, stored.customer.phone, stored.customer.iban, stored.card]) {
      expect(v).toEqual({ $pii: expect.objectContaining({ v: 1, subject: expect.stringMatching(/^sub_[0-9a-f]{32}$/), alg: 'AES-256-GCM', iv: expect.any(String), ct: expect.any(String), tag: expect.any(String) }) });
    }
    expect(stored.note).toBe(note);
    expect(stored.amount).toBe(120);
    const subject = stored.customer.email.$pii.subject;
    // one subject for the customer object (anchored by the e-mail address)
    expect(stored.customer.name.$pii.subject).toBe(subject);
    expect(stored.customer.phone.$pii.subject).toBe(subject);
    expect(rec.details.pii_subjects).toContain(subject);
    expect(JSON.stringify(rec)).not.toContain(email);
    expect(JSON.stringify(rec)).not.toContain(name);

    // the subject is listed, found by its identifier, and its key exists in the HSM
    const subjects = await api('GET', '/audit/subjects', { key: t.apiKey });
    expect(subjects.body.subjects).toContainEqual(expect.objectContaining({ subject_id: subject, status: 'active', source: 'derived', action_count: 1 }));
    const lookup = await api('POST', '/audit/subjects/lookup', { key: t.apiKey, body: { identifier: email.toUpperCase() } });
    expect(lookup.body).toMatchObject({ subject_id: subject, known: true, status: 'active' });
    expect((await api('GET', `/hsm/keys/${subject}/status`, { key: t.apiKey })).body).toMatchObject({ subject_id: subject, key_exists: true, status: 'active' });
    expect((await api('GET', `/audit/erase/${subject}/verify`, { key: t.apiKey })).body).toMatchObject({ erased: false, key_exists: true });

    // before erasure the tenant can still open the envelope through the HSM
    const opened = await api('POST', '/hsm/decrypt', { key: t.apiKey, body: { envelope: stored.customer.email } });
    expect(opened.status).toBe(200);
    expect(opened.body).toEqual({ subject_id: subject, plaintext: email });

    // a second call about the same person adds to the same subject
    const r2 = await call(t.apiKey, { tool: 'svc_email_send', method: 'send', agent_id: 'pii-agent', params: { to: email, body: 'Your invoice' } });
    expect(r2.status).toBe(200);
    const [rec2] = await record(t.apiKey, r2.body.action_id);
    expect(rec2.params.to.$pii.subject).toBe(subject);

    // another tenant sees nothing of it
    expect((await api('GET', `/audit/erase/${subject}/verify`, { key: other.apiKey })).status).toBe(404);
    expect((await api('POST', `/audit/erase/${subject}`, { key: other.apiKey })).status).toBe(404);
    expect((await api('POST', '/hsm/decrypt', { key: other.apiKey, body: { envelope: stored.customer.email } })).status).toBe(404);
    expect((await api('GET', '/audit/subjects', { key: other.apiKey })).body.subjects.map((x: { subject_id: string }) => x.subject_id)).not.toContain(subject);

    // erase: the key is destroyed in the HSM
    const erased = await api('POST', `/audit/erase/${subject}`, { key: t.apiKey });
    expect(erased.status).toBe(200);
    expect(erased.body).toMatchObject({ status: 'erased', subject_id: subject, records_affected: 2 });
    expect((await api('GET', `/audit/erase/${subject}/verify`, { key: t.apiKey })).body).toMatchObject({ erased: true, key_exists: false });
    expect((await api('GET', `/hsm/keys/${subject}/status`, { key: t.apiKey })).body).toMatchObject({ key_exists: false, status: 'erased' });

    // the chain still verifies: it hashes ciphertext
    const verify = await api('GET', '/audit/verify', { key: t.apiKey });
    expect(verify.body).toMatchObject({ valid: true });

    // the records show the data as erased; the envelope can no longer be opened
    const [after] = await record(t.apiKey, r.body.action_id);
    expect(after.params.customer.email.$pii).toMatchObject({ subject, erased: true });
    expect(after.params.note).toBe(note);
    expect((await api('POST', '/hsm/decrypt', { key: t.apiKey, body: { envelope: stored.customer.email } })).status).toBe(409);
    expect((await api('GET', '/audit/subjects', { key: t.apiKey })).body.subjects).toContainEqual(expect.objectContaining({ subject_id: subject, status: 'erased' }));

    // replay still works on the erased inputs (the policy service reveals them as "[erased]")
    const replay = await api('POST', '/audit/replay', { key: t.apiKey, body: { action_id: r.body.action_id } });
    expect(replay.status).toBe(200);
    expect(replay.body).toMatchObject({ original_decision: 'allow' });

    // erasure is irreversible: the key cannot come back, and later data of the subject is not kept
    expect((await api('POST', '/hsm/keys', { key: t.apiKey, body: { subject_id: subject } })).status).toBe(409);
    expect((await api('POST', '/hsm/keys', { key: t.apiKey, body: { identifier: email } })).status).toBe(409);
    const r3 = await call(t.apiKey, { tool: 'svc_email_send', method: 'send', params: { to: email } });
    const [rec3] = await record(t.apiKey, r3.body.action_id);
    expect(rec3.params.to).toEqual({ $pii: { v: 1, subject, kind: 'email', erased: true } });

    // no copy of the plaintext remains anywhere
    for (const secret of [email, name]) {
      expect(tablesContaining(secret)).toEqual([]);
      expect(await redisContaining(secret)).toEqual([]);
      expect(logsContaining(secret)).toEqual([]);
    }
    expect(tablesContaining(subject)).toEqual(expect.arrayContaining(['public.audit_records', 'public.vault_subjects']));
  });

  test('/hsm/* endpoints: explicit subjects, encrypt/decrypt with documented bodies, key listing, precise errors', async () => {
    const subject = `customer-${randomUUID().slice(0, 8)}`;
    const created = await api('POST', '/hsm/keys', { key: t.apiKey, body: { subject_id: subject } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ subject_id: subject, key_id: expect.stringContaining(subject), algorithm: 'AES-256-GCM', backend: 'pkcs11', status: 'active', created: true });
    expect((await api('POST', '/hsm/keys', { key: t.apiKey, body: { subject_id: subject } })).status).toBe(200);

    const enc = await api('POST', '/hsm/encrypt', { key: t.apiKey, body: { subject_id: subject, plaintext: { street: '1 Main St', zip: 12345 } } });
    expect(enc.status).toBe(200);
    expect(enc.body.envelope.$pii).toMatchObject({ v: 1, subject, alg: 'AES-256-GCM' });
    const dec = await api('POST', '/hsm/decrypt', { key: t.apiKey, body: { envelope: enc.body.envelope } });
    expect(dec.body).toEqual({ subject_id: subject, plaintext: { street: '1 Main St', zip: 12345 } });

    // a tampered ciphertext does not authenticate (AES-GCM tag)
    const tampered = structuredClone(enc.body.envelope);
    tampered.$pii.ct = Buffer.from('tampered-bytes-here').toString('base64');
    const bad = await api('POST', '/hsm/decrypt', { key: t.apiKey, body: { envelope: tampered } });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0]).toMatchObject({ loc: ['body', 'envelope'], type: 'envelope_invalid' });

    // params naming their subject explicitly use it
    const r = await call(t.apiKey, { tool: 'svc_crm_update', method: 'update', params: { subject_id: subject, email: `x.${subject}@example.com` } });
    const [rec] = (await api('GET', '/audit/log?limit=1000', { key: t.apiKey })).body.records.filter((x: { action_id: string }) => x.action_id === r.body.action_id);
    expect(rec.params.subject_id).toBe(subject);
    expect(rec.params.email.$pii.subject).toBe(subject);

    const keys = await api('GET', '/hsm/keys', { key: t.apiKey });
    expect(keys.body.keys).toContainEqual(expect.objectContaining({ subject_id: subject, purpose: 'pii_subject', status: 'active', algorithm: 'AES-256-GCM' }));
    expect(JSON.stringify(keys.body)).not.toMatch(/"(value|key_material|secret)"/);

    expect((await api('POST', '/hsm/keys', { key: t.apiKey, body: {} })).status).toBe(422);
    expect((await api('POST', '/hsm/encrypt', { key: t.apiKey, body: { subject_id: subject } })).body.detail[0].loc).toEqual(['body', 'plaintext']);
    expect((await api('POST', '/hsm/decrypt', { key: t.apiKey, body: { envelope: { nope: 1 } } })).status).toBe(422);
    expect((await api('GET', '/hsm/keys/no-such-subject/status', { key: t.apiKey })).status).toBe(404);
    expect((await api('POST', '/audit/erase/no-such-subject', { key: t.apiKey })).status).toBe(404);

    const e = await api('POST', `/audit/erase/${subject}`, { key: t.apiKey });
    expect(e.body).toMatchObject({ status: 'erased', subject_id: subject, records_affected: 1 });
    expect((await api('POST', '/hsm/decrypt', { key: t.apiKey, body: { envelope: enc.body.envelope } })).status).toBe(409);
    expect((await api('POST', '/hsm/encrypt', { key: t.apiKey, body: { subject_id: subject, plaintext: 'x' } })).status).toBe(409);
  });
});

describe('when the vault is down', () => {
  afterAll(async () => {
    await fleet('start', 'vault');
  });

  test('a call is refused with 502 and nothing is stored in plaintext; audit reads still work', async () => {
    const email = `down.${randomUUID().slice(0, 8)}@example.com`;
    await fleet('stop', 'vault');
    const r = await call(t.apiKey, { tool: 'svc_email_send', method: 'send', params: { to: email } });
    expect(r.status).toBe(502);
    expect(r.body.detail).toMatch(/^Vault service unreachable/);
    const log = await api('GET', '/audit/log?limit=1000', { key: t.apiKey });
    expect(log.status).toBe(200);
    expect(JSON.stringify(log.body)).not.toContain(email);
    expect(tablesContaining(email)).toEqual([]);
    expect(logsContaining(email)).toEqual([]);
    await fleet('start', 'vault');
    // the gateway's channel reconnects with backoff: retry until the vault answers again
    const ok = await eventually(async () => {
      const res = await call(t.apiKey, { tool: 'svc_email_send', method: 'send', params: { to: email } });
      return res.status === 200 ? res : null;
    });
    const [rec] = await record(t.apiKey, ok.body.action_id);
    expect(rec.params.to.$pii).toMatchObject({ v: 1, kind: 'email' });
  });
});
