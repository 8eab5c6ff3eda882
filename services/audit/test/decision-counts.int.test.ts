/** Decision counts for the public dashboard, against the real local Postgres. */
import { randomUUID } from 'node:crypto';
import { type Db, openTestDb } from '@agw/shared';
import { AuditChain } from '../src/chain/audit-chain';
import { AuditRecordRepository, DecisionCountsReads } from '../src/chain/audit-record.repository';
import { governedEntry } from './support/entries';

let db: Db;
let chain: AuditChain;
let counts: DecisionCountsReads;

const day = (daysAgo: number) => new Date(Date.now() - daysAgo * 86_400_000).toISOString().slice(0, 10);
const at = (daysAgo: number) => new Date(Date.now() - daysAgo * 86_400_000).toISOString();

beforeAll(async () => {
  db = await openTestDb();
  chain = new AuditChain(new AuditRecordRepository(db), { tamperDemo: false });
  counts = new DecisionCountsReads(db);
});
afterAll(async () => {
  await db.destroy();
});

describe('decision counts', () => {
  it('counts a tenant’s records by UTC day and decision within the period, oldest first, and nothing else', async () => {
    const t = randomUUID();
    const other = randomUUID();
    for (const [decision, daysAgo] of [
      ['allow', 0],
      ['allow', 0],
      ['deny', 0],
      ['requires_human', 2],
      ['allow', 2],
      ['observed', 6],
      ['allow', 40], // outside a 30-day period
    ] as const) {
      await chain.append(t, governedEntry({ decision, requested_at: at(daysAgo), params: { secret: 'never-counted-out' } }));
    }
    await chain.append(other, governedEntry({ decision: 'deny' }));
    // control-plane changes and four-eyes votes are no decisions on calls: not counted
    await chain.append(t, governedEntry({ source: 'control_plane', decision: 'changed', tool: 'settings', method: 'update' }));
    await chain.append(t, governedEntry({ source: 'control_plane', decision: 'requires_human', details: { approval: 'vote' } }));

    const out = await counts.counts(t, 30);
    expect(out).toEqual([
      { day: day(6), decision: 'observed', count: 1 },
      { day: day(2), decision: 'allow', count: 1 },
      { day: day(2), decision: 'requires_human', count: 1 },
      { day: day(0), decision: 'allow', count: 2 },
      { day: day(0), decision: 'deny', count: 1 },
    ]);
    // one day: today only; an unknown tenant: nothing
    expect(await counts.counts(t, 1)).toEqual(out.filter((c) => c.day === day(0)));
    expect(await counts.counts(randomUUID(), 30)).toEqual([]);
    // the period is clamped to 1..366 days (0 means the default 30)
    expect(await counts.counts(t, 10_000)).toHaveLength(6);
    expect(await counts.counts(t, 0)).toEqual(out);
  });
});
