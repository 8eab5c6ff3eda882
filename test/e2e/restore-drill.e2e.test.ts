/**
 * The restore drill (docs/reliability.md, "Restore drill"): a tenant with audit records, approvals (one
 * pending, one approved, one rejected), a registered credential, personal data under a subject key, a
 * managed agent config with a delegate and a session, and two anchored Merkle tree heads with their signed
 * checkpoints is backed up with POST /api/backup/trigger; the file is restored into an EMPTY database with
 * the documented commands (sha256sum, createdb, psql, npm run migrate), run here exactly as written there;
 * then the policy, audit, vault and gateway services are started as real processes on the restored database
 * (support/restored-services.ts: free ports, the e2e fleet's SoftHSM2 token) and, through their public API:
 * the tenant's chain verifies; every record's inclusion proof reaches the root of the signed checkpoint taken
 * from the e2e fleet BEFORE the backup (checked with the verifier key published then, independently of the
 * services); the credential is decrypted through the HSM (the pending approval and a new call are brokered
 * with it to a local upstream, which receives the secret); the personal data opens; the pending approval is
 * still pending and the decided ones keep their decisions. A second tenant with data of every kind exists
 * before the backup: none of its rows or ids are in the restored database, and its key is refused there.
 */
import { execFileSync } from 'node:child_process';
import { createHash, createPublicKey, randomBytes, randomUUID, verify } from 'node:crypto';
import { rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { type ApiResponse, type Tenant, api, call, humanSession, newTenant } from './support/api';
import { E2E_DATABASE_URL } from './support/e2e-env';
import { type RestoredServices, startRestoredServices } from './support/restored-services';

jest.setTimeout(120_000);

const ROOT = path.resolve(__dirname, '../..');
const PG_HOST = '127.0.0.1';
const PG_USER = 'postgres';

// ---- an independent reading of the evidence (no code of the services) ------------------------------

const sha256 = (...parts: Buffer[]) => createHash('sha256').update(Buffer.concat(parts)).digest();

/** C2SP signed note: the text, and whether its one Ed25519 signature verifies under `vkey` (name+id+base64(0x01||key)). */
function openNote(note: string, vkey: string): { text: string; valid: boolean } {
  // base64 may hold '+' too: the name and the key id end at the first two
  const i = vkey.indexOf('+');
  const j = vkey.indexOf('+', i + 1);
  const [name, idHex, b64] = [vkey.slice(0, i), vkey.slice(i + 1, j), vkey.slice(j + 1)];
  const pub = Buffer.from(b64, 'base64').subarray(1);
  const split = note.lastIndexOf('\n\n');
  const text = note.slice(0, split + 1);
  const m = /^\u2014 (\S+) (\S+)$/.exec(note.slice(split + 2, -1));
  if (!m) return { text, valid: false };
  const sig = Buffer.from(m[2], 'base64');
  const spki = createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), pub]), format: 'der', type: 'spki' });
  return { text, valid: m[1] === name && sig.subarray(0, 4).toString('hex') === idHex && verify(null, Buffer.from(text), spki, sig.subarray(4)) };
}

/** RFC 9162 2.1.3.2: the root an inclusion proof leads to (leaf = the 32 bytes of record_hash), or null. */
function rootFromInclusionProof(recordHash: string, leafIndex: number, treeSize: number, proof: string[]): string | null {
  if (leafIndex >= treeSize) return null;
  let fn = leafIndex;
  let sn = treeSize - 1;
  let r = sha256(Buffer.from([0]), Buffer.from(recordHash, 'hex'));
  for (const hex of proof) {
    const p = Buffer.from(hex, 'hex');
    if (sn === 0) return null;
    if (fn % 2 === 1 || fn === sn) {
      r = sha256(Buffer.from([1]), p, r);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else {
      r = sha256(Buffer.from([1]), r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 ? r.toString('hex') : null;
}

// ---- a local upstream that records what the vault sends it ------------------------------------------

interface Hit {
  actionId: string;
  authorization: string | undefined;
  body: string;
}
const hits: Hit[] = [];
let upstream: http.Server;
let upstreamUrl: string;
const hitsFor = (actionId: string) => hits.filter((h) => h.actionId === actionId);
const backupFiles: string[] = [];

// ---- the restored side ------------------------------------------------------------------------------

const restoredName = `agw_drill_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
const restoredUrl = E2E_DATABASE_URL.replace(/\/[^/]*$/, `/${restoredName}`);
let restored: RestoredServices | undefined;
/** printed at the end (docs/reliability.md, "Restore drill", figures); never asserted */
const figures: Record<string, unknown> = {};

/** The public API of the restored gateway (same contract: its responses join the contract log). */
const rapi = (method: string, p: string, o: { key?: string; token?: string; body?: unknown } = {}): Promise<ApiResponse> => api(method, p, { ...o, base: restored!.baseUrl });

/** psql on the restored database: one query, rows as arrays of fields. */
function sqlRows(query: string): string[][] {
  const out = execFileSync('psql', ['-X', '-q', '-A', '-t', '-F', '\t', '-v', 'ON_ERROR_STOP=1', '-c', query, restoredUrl], { encoding: 'utf8' });
  return out
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => l.split('\t'));
}

beforeAll(async () => {
  upstream = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      hits.push({ actionId: String(req.headers['x-agw-action-id'] ?? ''), authorization: req.headers.authorization, body: Buffer.concat(chunks).toString() });
      res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true }));
    });
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await restored?.stop();
  execFileSync('dropdb', ['-h', PG_HOST, '-U', PG_USER, '--if-exists', '--force', restoredName]);
  // the backup holds the tenant's rows (ciphertext credentials, key handles): not left behind by a test
  for (const file of backupFiles) rmSync(file, { force: true });
  await new Promise<void>((r) => upstream.close(() => r()));
}, 60_000);

describe('restore drill: a tenant backup restored into an empty database, served again', () => {
  let a: Tenant;
  let b: Tenant;
  const secretA = `sk-drill-${randomBytes(16).toString('hex')}`;
  const secretB = `sk-drill-${randomBytes(16).toString('hex')}`;
  const toolA = `svc_drill_${randomUUID().slice(0, 8)}`;
  const toolB = `svc_drill_${randomUUID().slice(0, 8)}`;
  const email = `drill.${randomUUID().slice(0, 8)}@example.com`;
  let piiEnvelope: unknown;
  let pendingId: string;
  let approvedId: string;
  let rejectedId: string;
  let managed: { root: string; child: string; session: string };
  /** what the e2e fleet showed of A just before the backup */
  let before: { vkey: string; records: Array<{ action_id: string; record_hash: string }>; count: number; checkpoints: Array<{ tree_index: number; tree_size: number; note: string; root: string }> };
  /** B's ids, none of which may be in the restored database */
  const bIds: string[] = [];
  let backup: { path: string; sha256: string; restore_command: string; rows: Record<string, number>; size_bytes: number; duration_ms: number };

  it('builds tenant A (records, approvals, a credential, personal data, a managed config and session, two anchored heads) and tenant B beside it', async () => {
    [a, b] = await Promise.all([newTenant('Restore drill A'), newTenant('Restore drill B')]);

    // credentials (HSM-encrypted), each brokered once to the local upstream
    for (const [t, tool, value] of [
      [a, toolA, secretA],
      [b, toolB, secretB],
    ] as const) {
      const reg = await api('POST', '/credentials/register', { key: t.apiKey, body: { tool_id: tool, name: 'drill-token', value, credential_type: 'bearer', upstream_url: `${upstreamUrl}/drill` } });
      expect(reg.status).toBe(201);
      const r = await call(t.apiKey, { tool, method: 'lookup', agent_id: 'drill-agent', params: { n: 1 } });
      expect(r.body).toMatchObject({ status: 'allowed', execution_mode: 'gateway_brokered' });
      expect(hitsFor(r.body.action_id).map((h) => h.authorization)).toEqual([`Bearer ${value}`]);
    }

    // records, one with personal data (stored as a per-subject envelope)
    for (let i = 0; i < 3; i++) expect((await call(a.apiKey, { params: { q: `drill ${i}` } })).status).toBe(200);
    const pii = await call(a.apiKey, { params: { q: 'contact', customer: { email } } });
    expect(pii.status).toBe(200);

    // approvals: one left pending (on the credential's tool: executed through the vault when approved), one approved, one rejected
    const pending = await call(a.apiKey, { tool: toolA, method: 'delete', agent_id: 'drill-agent', params: { record: 7 } });
    const toApprove = await call(a.apiKey, { method: 'delete', params: { table: 'drill' } });
    const toReject = await call(a.apiKey, { method: 'purge', params: {} });
    expect([pending.status, toApprove.status, toReject.status]).toEqual([202, 202, 202]);
    [pendingId, approvedId, rejectedId] = [pending.body.action_id, toApprove.body.action_id, toReject.body.action_id];
    const human = await humanSession(a);
    expect((await api('POST', `/approve/${approvedId}`, { token: human, body: { note: 'drill: fine' } })).body).toMatchObject({ status: 'approved' });
    expect((await api('POST', `/reject/${rejectedId}`, { token: human, body: { reason: 'drill: no' } })).body).toMatchObject({ status: 'rejected' });
    expect(hitsFor(pendingId)).toEqual([]);

    // a managed agent config, a delegate of it (managed_agent_configs references itself) and a session, interrupted
    const root = await api('POST', '/managed/agents', { key: a.apiKey, body: { name: 'drill-root', allowed_tools: ['svc_web_search'], max_delegation_depth: 2 } });
    expect(root.status).toBe(200);
    const child = await api('POST', '/managed/agents', { key: a.apiKey, body: { name: 'drill-delegate', allowed_tools: ['svc_web_search'], parent_agent_id: root.body.id } });
    expect(child.status).toBe(200);
    const session = await api('POST', '/managed/sessions', { key: a.apiKey, body: { agent_id: child.body.id, user_message: 'restore drill' } });
    expect(session.status).toBe(200);
    expect((await api('POST', `/managed/sessions/${session.body.session_id}/interrupt`, { key: a.apiKey, body: { reason: 'restore drill' } })).status).toBe(200);
    managed = { root: root.body.id, child: child.body.id, session: session.body.session_id };

    // two tree heads, each signed and anchored; then one more record that no head covers yet
    expect((await api('POST', '/anchor/trigger', { key: a.apiKey })).body).toMatchObject({ status: 'anchored', tree_index: 0 });
    for (let i = 0; i < 2; i++) expect((await call(a.apiKey, { params: { q: `drill after head 0, ${i}` } })).status).toBe(200);
    expect((await api('POST', '/anchor/trigger', { key: a.apiKey })).body).toMatchObject({ status: 'anchored', tree_index: 1 });
    expect((await call(a.apiKey, { params: { q: 'drill after head 1' } })).status).toBe(200);

    // B: a record, a pending approval, a subject, a managed config, an anchored head (its credential is above)
    const bCall = await call(b.apiKey, { params: { q: 'other tenant', customer: { email: `other.${email}` } } });
    const bPending = await call(b.apiKey, { method: 'delete', params: { table: 'other' } });
    const bConfig = await api('POST', '/managed/agents', { key: b.apiKey, body: { name: 'other-root', allowed_tools: ['svc_web_search'] } });
    expect([bCall.status, bPending.status, bConfig.status]).toEqual([200, 202, 200]);
    expect((await api('POST', '/anchor/trigger', { key: b.apiKey })).body).toMatchObject({ status: 'anchored' });
    const bLog = await api('GET', '/audit/log?limit=1000', { key: b.apiKey });
    bIds.push(b.tenantId, b.email, b.slug, toolB, bConfig.body.id, ...bLog.body.records.flatMap((r: { action_id: string; record_hash: string }) => [r.action_id, r.record_hash]));
    expect(bIds).toContain(bPending.body.action_id);

    // what A's evidence is before the backup: records, the verifier key, every signed checkpoint (checked here)
    const log = await api('GET', '/audit/log?limit=1000', { key: a.apiKey });
    const rec = log.body.records.find((r: { action_id: string }) => r.action_id === pii.body.action_id);
    piiEnvelope = rec.params.customer.email;
    expect(piiEnvelope).toEqual({ $pii: expect.objectContaining({ alg: 'AES-256-GCM' }) });
    const vkey: string = (await api('GET', '/audit/verifier-key', { key: a.apiKey })).body.vkey;
    const trees = (await api('GET', '/audit/merkle/roots', { key: a.apiKey })).body.trees as Array<{ tree_index: number; record_count: number; merkle_root: string }>;
    expect(trees.map((t) => t.tree_index)).toEqual([0, 1]);
    const checkpoints = [];
    for (const t of trees) {
      const cp = await api('GET', `/audit/checkpoints/${t.record_count}`, { key: a.apiKey });
      expect(cp.status).toBe(200);
      const note: string = cp.body.checkpoint;
      const opened = openNote(note, vkey);
      expect(opened.valid).toBe(true);
      const [origin, size, rootB64] = opened.text.trimEnd().split('\n');
      expect([origin, Number(size)]).toEqual([`localhost/agw/${a.tenantId}`, t.record_count]);
      const root = Buffer.from(rootB64, 'base64').toString('hex');
      expect(root).toBe(t.merkle_root);
      checkpoints.push({ tree_index: t.tree_index, tree_size: t.record_count, note, root });
    }
    const verified = await api('GET', '/audit/verify', { key: a.apiKey });
    expect(verified.body).toMatchObject({ valid: true });
    const records = (log.body.records as Array<{ action_id: string; record_hash: string }>).map(({ action_id, record_hash }) => ({ action_id, record_hash }));
    expect(records).toHaveLength(verified.body.record_count);
    before = { vkey, records, count: verified.body.record_count, checkpoints };
    expect(checkpoints[1].tree_size).toBe(before.count - 1);
  });

  it('POST /api/backup/trigger writes the tenant backup, with the documented restore command', async () => {
    const r = await api('POST', '/backup/trigger', { key: a.apiKey });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ status: 'completed', scope: 'tenant', tenant_id: a.tenantId, format: 'sql' });
    backup = r.body;
    backupFiles.push(backup.path, `${backup.path}.json`);
    Object.assign(figures, { records: before.count, backup_bytes: backup.size_bytes, backup_ms: backup.duration_ms, backup_rows: Object.values(backup.rows).reduce((x, y) => x + y, 0) });
    // the command of docs/reliability.md ("Restore drill") and docs/operations.md, step 3
    expect(backup.restore_command).toBe(`psql -X -v ON_ERROR_STOP=1 --single-transaction -f ${backup.path} <empty-database-url>`);
    expect(backup.rows).toMatchObject({
      tenants: 1,
      audit_records: before.count,
      audit_chain_heads: 1,
      approvals: 3,
      vault_credentials: 1,
      managed_agent_configs: 2,
      managed_sessions: 1,
      merkle_tree_heads: 2,
      merkle_checkpoints: 2,
      anchor_tree_heads: 2,
    });
    expect(backup.rows.anchor_batches).toBeGreaterThanOrEqual(1);
    expect(backup.rows.vault_keys).toBeGreaterThanOrEqual(2); // the credentials key and the subject's key
  });

  it('restores it into an EMPTY database with the documented commands, exactly as written', () => {
    // 1. the file is the one the answer describes
    const [digest] = execFileSync('sha256sum', [backup.path], { encoding: 'utf8' }).split(/\s+/);
    expect(digest).toBe(backup.sha256);
    // 2. an empty database
    execFileSync('createdb', ['-h', PG_HOST, '-U', PG_USER, restoredName]);
    expect(sqlRows(`SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public'`)).toEqual([['0']]);
    // 3. the restore command of the answer, with the empty database's URL
    const [cmd, ...args] = backup.restore_command.replace('<empty-database-url>', restoredUrl).split(' ');
    expect(cmd).toBe('psql');
    let t0 = Date.now();
    execFileSync(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    figures.psql_restore_ms = Date.now() - t0;
    // 4. the schema brought up to date (already the latest: the backup was made by this code)
    t0 = Date.now();
    const migrated = execFileSync('npm', ['run', 'migrate'], { cwd: ROOT, env: { ...process.env, DATABASE_URL: restoredUrl }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    figures.migrate_ms = Date.now() - t0;
    expect(migrated).toContain('already up to date');
  });

  it('holds the tenant alone: no row and no id of the other tenant came along', () => {
    expect(sqlRows('SELECT id FROM tenants')).toEqual([[a.tenantId]]);
    const tables = sqlRows(
      `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_attribute t ON t.attrelid = c.oid AND t.attname = 'tenant_id' AND NOT t.attisdropped
        WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT c.relispartition ORDER BY 1`,
    ).map(([t]) => t);
    expect(tables).toEqual(expect.arrayContaining(['audit_records', 'approvals', 'vault_credentials', 'vault_keys', 'managed_agent_configs', 'merkle_checkpoints', 'anchor_tree_heads']));
    const foreign = sqlRows(tables.map((t) => `SELECT '${t}', count(*) FROM public."${t}" WHERE tenant_id IS DISTINCT FROM '${a.tenantId}'`).join(' UNION ALL '));
    expect(foreign.filter(([, n]) => n !== '0')).toEqual([]);
    // every row of every table, searched for B's ids (tenant, e-mail, slug, credential, config, actions, record hashes)
    const dump = execFileSync('pg_dump', ['--section=data', '--no-owner', restoredUrl], { encoding: 'utf8', maxBuffer: 512 * 1024 * 1024 });
    expect(bIds.length).toBeGreaterThan(8);
    expect(bIds.filter((id) => dump.includes(id))).toEqual([]);
    expect(dump).not.toContain(secretA); // the credential is ciphertext
    // and A's are there (the search can find what it looks for)
    for (const id of [a.tenantId, toolA, pendingId, managed.child, managed.session, ...before.records.map((r) => r.record_hash)]) expect(dump).toContain(id);
    // the delegate still names its parent (the self-reference of managed_agent_configs restored)
    expect(sqlRows(`SELECT parent_agent_id FROM managed_agent_configs WHERE id = '${managed.child}'`)).toEqual([[managed.root]]);
    expect(sqlRows(`SELECT status FROM managed_sessions WHERE id = '${managed.session}'`)).toEqual([['interrupted']]);
  });

  it('starts the policy, audit, vault and gateway services on it', async () => {
    const t0 = Date.now();
    restored = await startRestoredServices(restoredUrl);
    figures.services_ready_ms = Date.now() - t0;
    const health = await rapi('GET', '/health');
    expect(health.body.hsm).toEqual({ status: 'ok', backend: 'pkcs11', token_label: 'agw-vault' });
  });

  it("verifies the tenant's chain, as it was", async () => {
    expect((await rapi('GET', '/audit/verify', { key: a.apiKey })).body).toEqual({ valid: true, record_count: before.count });
    const log = await rapi('GET', '/audit/log?limit=1000', { key: a.apiKey });
    expect(log.status).toBe(200);
    expect((log.body.records as Array<{ action_id: string; record_hash: string }>).map(({ action_id, record_hash }) => ({ action_id, record_hash }))).toEqual(before.records);
  });

  it('proves every record against the signed checkpoints taken before the backup', async () => {
    // the same verifier key (the evidence key pair in the HSM), the same signed notes
    expect((await rapi('GET', '/audit/verifier-key', { key: a.apiKey })).body.vkey).toBe(before.vkey);
    const byLeaf = [...before.records].reverse(); // the log lists the newest first; leaf i is the (i+1)-th record
    let proofs = 0;
    for (const cp of before.checkpoints) {
      expect((await rapi('GET', `/audit/checkpoints/${cp.tree_size}`, { key: a.apiKey })).body.checkpoint).toBe(cp.note);
      for (let leaf = 0; leaf < cp.tree_size; leaf++) {
        const hash = byLeaf[leaf].record_hash;
        const p = await rapi('GET', `/audit/merkle/proof/${hash}?tree_index=${cp.tree_index}`, { key: a.apiKey });
        expect(p.status).toBe(200);
        expect(p.body).toMatchObject({ leaf_index: leaf, tree_size: cp.tree_size, tree_index: cp.tree_index });
        // recomputed here from the proof, compared with the root the OLD signed note carries
        expect(rootFromInclusionProof(hash, p.body.leaf_index, cp.tree_size, p.body.proof)).toBe(cp.root);
        proofs++;
      }
    }
    expect(proofs).toBe(before.checkpoints[0].tree_size + before.checkpoints[1].tree_size);
    Object.assign(figures, { checkpoints: before.checkpoints.map((c) => c.tree_size), proofs_verified: proofs });
    // the record after the last head is in no tree yet, as before
    expect((await rapi('GET', `/audit/merkle/proof/${before.records[0].record_hash}`, { key: a.apiKey })).status).toBe(409);
  });

  it('keeps the approvals: the pending one is still pending, the decided ones keep their decision', async () => {
    const pending = (await rapi('GET', '/approvals', { key: a.apiKey })).body.pending as Array<{ action_id: string; tool: string }>;
    expect(pending.map((p) => [p.action_id, p.tool])).toEqual([[pendingId, toolA]]);
    const history = (await rapi('GET', '/approvals/history', { key: a.apiKey })).body.history as Array<{ action_id: string; status: string; note: string }>;
    expect(history.find((h) => h.action_id === approvedId)).toMatchObject({ status: 'approved', note: 'drill: fine' });
    expect(history.find((h) => h.action_id === rejectedId)).toMatchObject({ status: 'rejected', note: 'drill: no' });
  });

  it('decrypts the credential and the personal data through the HSM', async () => {
    const creds = await rapi('GET', '/credentials', { key: a.apiKey });
    expect(creds.body.credentials).toEqual([expect.objectContaining({ tool_id: toolA, name: 'drill-token' })]);

    // the pending approval, approved by a human signed in on the restored gateway, runs with the credential
    const login = await rapi('POST', '/auth/login', { body: { email: a.email, password: a.password } });
    expect(login.status).toBe(200);
    const ok = await rapi('POST', `/approve/${pendingId}`, { token: login.body.access_token, body: { note: 'after the restore' } });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ status: 'approved', execution_mode: 'gateway_brokered', execution_result: { status_code: 201 } });
    expect(hitsFor(pendingId).map((h) => [h.authorization, JSON.parse(h.body)])).toEqual([[`Bearer ${secretA}`, { record: 7 }]]);

    // and a new call to the tool
    const r = await rapi('POST', '/mcp/tools/call', { key: a.apiKey, body: { agent_id: 'drill-agent', agent_type: 'assistant', agent_version: '1.0.0', tool: toolA, method: 'lookup', params: { n: 2 } } });
    expect(r.body).toMatchObject({ status: 'allowed', execution_mode: 'gateway_brokered', execution_result: { status_code: 201 } });
    expect(hitsFor(r.body.action_id).map((h) => h.authorization)).toEqual([`Bearer ${secretA}`]);

    // the subject's key opens the envelope stored before the backup
    expect((await rapi('POST', '/hsm/decrypt', { key: a.apiKey, body: { envelope: piiEnvelope } })).body).toMatchObject({ plaintext: email });

    // the chain goes on from its restored head: the decision and the call joined it
    expect((await rapi('GET', '/audit/verify', { key: a.apiKey })).body).toEqual({ valid: true, record_count: before.count + 2 });
  });

  it("refuses the other tenant's key (its key is not in the restored database)", async () => {
    expect((await rapi('GET', '/audit/verify', { key: b.apiKey })).status).toBe(401);
    Object.assign(figures, { other_tenant_ids_searched: bIds.length });
    process.stdout.write(`restore drill: ${JSON.stringify(figures)}\n`);
  });
});
