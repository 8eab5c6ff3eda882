/** The only queries on audit_records / audit_chain_heads / audit_tamper_backups. Tenant id first, always. */
import type { Db } from '@agw/shared';
import { sql } from 'kysely';
import type { ChainEntry } from './record-hash';

export interface StoredRecord extends ChainEntry {
  id: number;
  tenant_seq: number;
  prev_hash: string;
  record_hash: string;
}

const columns = [
  'id',
  'tenant_seq',
  'action_id',
  'agent_id',
  'agent_type',
  'agent_version',
  'tool',
  'method',
  'params',
  'decision',
  'violations',
  'severity',
  'alert_tier',
  'requires_human',
  'execution_mode',
  'source',
  'session_id',
  'bundle_revision',
  'details',
  'requested_at',
  'prev_hash',
  'record_hash',
] as const;

type Row = { [K in (typeof columns)[number]]: unknown };

function toRecord(r: Row): StoredRecord {
  return {
    ...(r as unknown as StoredRecord),
    id: Number(r.id),
    tenant_seq: Number(r.tenant_seq),
    requested_at: (r.requested_at as Date).toISOString(),
  };
}

export class AuditRecordRepository {
  constructor(private readonly db: Db) {}

  /**
   * Append under the tenant's chain-head row lock: the head row serializes appends of one tenant,
   * other tenants proceed in parallel. `link` computes the record hash from the previous one.
   */
  async append(tenantId: string, entry: ChainEntry, link: (prevHash: string) => string): Promise<StoredRecord> {
    return this.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('audit_chain_heads')
        .values({ tenant_id: tenantId, last_hash: 'GENESIS', record_count: 0 })
        .onConflict((oc) => oc.column('tenant_id').doNothing())
        .execute();
      const head = await trx
        .selectFrom('audit_chain_heads')
        .select(['last_hash', 'record_count'])
        .where('tenant_id', '=', tenantId)
        .forUpdate()
        .executeTakeFirstOrThrow();
      const recordHash = link(head.last_hash);
      const row = await trx
        .insertInto('audit_records')
        .values({
          tenant_id: tenantId,
          tenant_seq: Number(head.record_count),
          action_id: entry.action_id,
          agent_id: entry.agent_id,
          agent_type: entry.agent_type,
          agent_version: entry.agent_version,
          tool: entry.tool,
          method: entry.method,
          params: JSON.stringify(entry.params),
          decision: entry.decision,
          violations: JSON.stringify(entry.violations),
          severity: entry.severity,
          alert_tier: entry.alert_tier,
          requires_human: entry.requires_human,
          execution_mode: entry.execution_mode,
          source: entry.source,
          session_id: entry.session_id,
          bundle_revision: entry.bundle_revision,
          details: JSON.stringify(entry.details),
          requested_at: entry.requested_at,
          prev_hash: head.last_hash,
          record_hash: recordHash,
        })
        .returning(columns)
        .executeTakeFirstOrThrow();
      await trx
        .updateTable('audit_chain_heads')
        .set({ last_hash: recordHash, record_count: sql`record_count + 1` })
        .where('tenant_id', '=', tenantId)
        .execute();
      return toRecord(row as Row);
    });
  }

  async list(tenantId: string, o: { limit: number; sessionId?: string; chronological?: boolean }): Promise<StoredRecord[]> {
    let q = this.db.selectFrom('audit_records').select(columns).where('tenant_id', '=', tenantId);
    if (o.sessionId) q = q.where('session_id', '=', o.sessionId);
    const rows = await q.orderBy('tenant_seq', o.chronological ? 'asc' : 'desc').limit(o.limit).execute();
    return rows.map((r) => toRecord(r as Row));
  }

  async byAction(tenantId: string, actionId: string): Promise<StoredRecord[]> {
    const rows = await this.db
      .selectFrom('audit_records')
      .select(columns)
      .where('tenant_id', '=', tenantId)
      .where('action_id', '=', actionId)
      .orderBy('tenant_seq', 'asc')
      .execute();
    return rows.map((r) => toRecord(r as Row));
  }

  /** Records in chain order from `afterSeq` (exclusive), a page at a time. */
  async page(tenantId: string, afterSeq: number, size: number): Promise<StoredRecord[]> {
    const rows = await this.db
      .selectFrom('audit_records')
      .select(columns)
      .where('tenant_id', '=', tenantId)
      .where('tenant_seq', '>', afterSeq)
      .orderBy('tenant_seq', 'asc')
      .limit(size)
      .execute();
    return rows.map((r) => toRecord(r as Row));
  }

  async latest(tenantId: string): Promise<StoredRecord | undefined> {
    return (await this.list(tenantId, { limit: 1 }))[0];
  }

  /** Demo: overwrite one column of a record, keeping the original in audit_tamper_backups. */
  async tamper(tenantId: string, recordId: number, patch: { decision?: string; tool?: string; method?: string; params?: string }): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const original = await trx
        .selectFrom('audit_records')
        .select(['decision', 'tool', 'method', 'params'])
        .where('tenant_id', '=', tenantId)
        .where('id', '=', recordId)
        .executeTakeFirstOrThrow();
      await trx
        .insertInto('audit_tamper_backups')
        .values({ record_id: recordId, tenant_id: tenantId, original: JSON.stringify(original) })
        .onConflict((oc) => oc.column('record_id').doNothing())
        .execute();
      await trx.updateTable('audit_records').set(patch).where('tenant_id', '=', tenantId).where('id', '=', recordId).execute();
    });
  }

  /** Demo: put back every tampered record of the tenant; returns how many. */
  async restore(tenantId: string): Promise<number> {
    return this.db.transaction().execute(async (trx) => {
      const backups = await trx
        .selectFrom('audit_tamper_backups')
        .select(['record_id', 'original'])
        .where('tenant_id', '=', tenantId)
        .execute();
      for (const b of backups) {
        const o = b.original as { decision: string; tool: string; method: string; params: unknown };
        await trx
          .updateTable('audit_records')
          .set({ decision: o.decision, tool: o.tool, method: o.method, params: JSON.stringify(o.params) })
          .where('tenant_id', '=', tenantId)
          .where('id', '=', b.record_id)
          .execute();
      }
      await trx.deleteFrom('audit_tamper_backups').where('tenant_id', '=', tenantId).execute();
      return backups.length;
    });
  }
}
