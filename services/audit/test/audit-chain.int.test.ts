/** The hash chain against the real local Postgres. */
import { randomUUID } from 'node:crypto';
import { type Db, openTestDb } from '@agw/shared';
import { AuditRecordRepository } from '../src/chain/audit-record.repository';
import { AuditChain } from '../src/chain/audit-chain';
import { type ChainEntry, GENESIS, recordHash } from '../src/chain/record-hash';
import { governedEntry } from './support/entries';

let db: Db;
let chain: AuditChain;

const entry = (over: Partial<ChainEntry> = {}): ChainEntry => governedEntry({ params: { q: 'x', big: 12345678901234, nested: { list: [1, 'two', null, true] } }, ...over });

beforeAll(async () => {
  db = await openTestDb();
  chain = new AuditChain(new AuditRecordRepository(db), { tamperDemo: true });
});
afterAll(async () => {
  await db.destroy();
});

describe('audit chain', () => {
  it('starts at GENESIS and links every record to the previous one', async () => {
    const t = randomUUID();
    const a = await chain.append(t, entry());
    const b = await chain.append(t, entry({ decision: 'deny', violations: ['x'], severity: 'high' }));
    expect(a.prev_hash).toBe(GENESIS);
    expect(a.tenant_seq).toBe(0);
    expect(b.prev_hash).toBe(a.record_hash);
    expect(b.tenant_seq).toBe(1);
    expect(a.record_hash).toBe(recordHash(a, GENESIS));
    expect(await chain.verify(t)).toEqual({ valid: true, record_count: 2 });
  });

  it('hashes in Postgres exactly as the documented TypeScript recomputation does (any Unicode)', async () => {
    const t = randomUUID();
    const r = await chain.append(t, entry({ params: { s: 'é 😀 \u2028 "q" \\ 日本', n: 1e21, f: 0.1, neg: -0, nested: [{ z: 1, a: [] }] }, details: { note: 'Ünïcödé' } }));
    expect(r.record_hash).toBe(recordHash(r, GENESIS));
    expect(await chain.verify(t)).toEqual({ valid: true, record_count: 1 });
  });

  it('keeps tenants apart: one chain never holds another tenant’s records', async () => {
    const t1 = randomUUID();
    const t2 = randomUUID();
    await chain.append(t1, entry());
    const first2 = await chain.append(t2, entry());
    expect(first2.prev_hash).toBe(GENESIS);
    expect((await chain.list(t1, { limit: 10 })).every((r) => r.tenant_seq === 0)).toBe(true);
    expect(await chain.list(t2, { limit: 10 })).toHaveLength(1);
  });

  it('serializes concurrent appends of one tenant into one valid chain', async () => {
    const t = randomUUID();
    await Promise.all(Array.from({ length: 40 }, () => chain.append(t, entry())));
    const v = await chain.verify(t);
    expect(v).toEqual({ valid: true, record_count: 40 });
    const seqs = (await chain.list(t, { limit: 100, chronological: true })).map((r) => r.tenant_seq);
    expect(seqs).toEqual(Array.from({ length: 40 }, (_, i) => i));
  });

  it('detects tampering with hash_mismatch at the altered record, and the demo restores it', async () => {
    const t = randomUUID();
    await chain.append(t, entry());
    const victim = await chain.append(t, entry({ decision: 'deny', severity: 'high', violations: ['v'] }));
    await chain.append(t, entry());
    const { action_id } = await chain.tamperSimulate(t, { actionId: victim.action_id, field: 'decision', value: 'allow' });
    expect(action_id).toBe(victim.action_id);
    const broken = await chain.verify(t);
    expect(broken.valid).toBe(false);
    expect(broken.reason).toBe('hash_mismatch');
    expect(broken.failed_at_action_id).toBe(victim.action_id);
    expect(await chain.tamperRestore(t)).toBe(1);
    expect(await chain.verify(t)).toEqual({ valid: true, record_count: 3 });
  });

  it('restores the original even when tampers and restores of one record race (the backup is never a tampered value)', async () => {
    const t = randomUUID();
    const victim = await chain.append(t, entry({ method: 'delete' }));
    for (let round = 0; round < 60; round++) {
      await Promise.all([
        chain.tamperSimulate(t, { actionId: victim.action_id, field: 'method', value: `m${round}a` }),
        chain.tamperRestore(t),
        chain.tamperSimulate(t, { actionId: victim.action_id, field: 'method', value: `m${round}b` }),
        chain.tamperRestore(t),
      ]);
    }
    await chain.tamperRestore(t);
    expect(await chain.verify(t)).toEqual({ valid: true, record_count: 1 });
  });

  it('detects a record edited directly in the database (params)', async () => {
    const t = randomUUID();
    const r = await chain.append(t, entry());
    await db.updateTable('audit_records').set({ params: JSON.stringify({ q: 'changed' }) }).where('id', '=', r.id).execute();
    expect((await chain.verify(t)).failed_at_action_id).toBe(r.action_id);
  });

  it('refuses the tamper demo when it is disabled', async () => {
    const off = new AuditChain(new AuditRecordRepository(db), { tamperDemo: false });
    await expect(off.tamperSimulate(randomUUID(), {})).rejects.toMatchObject({ code: 'forbidden' });
  });
});
