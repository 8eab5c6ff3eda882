/**
 * The owner of audit_records, audit_chain_heads and audit_tamper_backups: this file holds the only queries on
 * audit_records. The chain's own use is `AuditRecordRepository` (every write: appends through the registered
 * SQL functions, packages/shared/src/db/functions/audit-append.sql.ts, and the tamper demo; and the chain's
 * reads). Every other reader gets a read model here, a narrow query object for what it needs and nothing
 * more: `SessionTotalsReads` (managed sessions' live totals), `DecisionCountsReads` (the public dashboard),
 * `ExportRangeReads` (the compliance export), `MerkleLeafReads` and `RECORD_BY_HASH_SQL` (the Merkle tree
 * build and inclusion proofs). The Merkle repository also reads audit_chain_heads' record counts, joined with
 * its tree heads (merkle.repository.ts). Tenant id first, always.
 */
import {
  type Conn,
  type Database,
  type Db,
  type DecisionInputRow,
  type RecordFieldKind,
  actionRecordFieldKinds,
  actionRecordFields,
  copyLiteral,
  copyRows,
  preparedQuery,
  recordFieldsOf,
  recordIdOf,
} from '@agw/shared';
import type { ExportSummary } from '@agw/verifier';
import { type Transaction, sql } from 'kysely';
import type { ChainEntry } from './record-hash';

export interface StoredRecord extends ChainEntry {
  /**
   * The global row key (one sequence for every tenant): internal to this service (tamper demo, keys). What a
   * tenant sees as the record's id is `recordIdOf(tenant_seq)` (docs/audit.md, "Record ids").
   */
  id: number;
  /** 0-based position in the tenant's chain (the Merkle leaf index) */
  tenant_seq: number;
  prev_hash: string;
  record_hash: string;
}

/** A record as verification reads it (chainRecords): everything but the global row key. */
export type ChainRecord = Omit<StoredRecord, 'id'>;

/** What the chain's reads select: the row key, the position, the record's fields (its message's, in order), the hashes. */
const columns = ['id', 'tenant_seq', ...actionRecordFields, 'prev_hash', 'record_hash'] as const;

type Row = Record<(typeof columns)[number], unknown>;

function toRecord(r: Row): StoredRecord {
  return {
    ...(r as unknown as StoredRecord),
    id: Number(r.id),
    tenant_seq: Number(r.tenant_seq),
    requested_at: (r.requested_at as Date).toISOString(),
  };
}

/**
 * A field's column as chainRecords selects it (COPY text), and the JavaScript expression that makes the
 * record's value from its text `t`: the same values as a SELECT through kysely (jsonb through JSON.parse, what
 * pg does; booleans from `t`/`f`; a time as Date#toISOString of its epoch milliseconds, what pg's Date did: the
 * fraction below a millisecond is dropped).
 */
const copyColumnOfKind: Record<RecordFieldKind, { select: (column: string) => string; value: (t: string) => string }> = {
  text: { select: (c) => c, value: (t) => t },
  nullable: { select: (c) => c, value: (t) => t },
  list: { select: (c) => c, value: (t) => `JSON.parse(${t})` },
  object: { select: (c) => c, value: (t) => `JSON.parse(${t})` },
  bool: { select: (c) => c, value: (t) => `${t} === 't'` },
  time: { select: (c) => `floor(extract(epoch FROM ${c}) * 1000)::bigint`, value: (t) => `new Date(Number(${t})).toISOString()` },
};

/** What chainRecords selects: tenant_seq, every field of the record (its message's, in order), prev_hash, record_hash. */
const CHAIN_RECORD_COLUMNS = ['tenant_seq', ...actionRecordFieldKinds.map(([field, kind]) => copyColumnOfKind[kind].select(field)), 'prev_hash', 'record_hash'].join(', ');

/**
 * A record from its fields' text as chainRecords selects them (COPY text, copy-rows.ts). Compiled once from
 * the field list into one object literal: verification builds a million of these, and a loop over the fields
 * took twice the time of the literal (the names are the message's field names, plain identifiers).
 */
const chainRecordOf = (() => {
  const at = actionRecordFieldKinds.length + 1;
  const fields = actionRecordFieldKinds.map(([field, kind], i) => {
    if (!/^[a-z_][a-z0-9_]*$/.test(field)) throw new Error(`record field "${field}" is not a plain identifier`);
    return `${field}: ${copyColumnOfKind[kind].value(`f[${i + 1}]`)}`;
  });
  const body = `return { tenant_seq: Number(f[0]), ${fields.join(', ')}, prev_hash: f[${at}], record_hash: f[${at + 1}] };`;
  return new Function('f', body) as (f: Array<string | null>) => ChainRecord;
})();

/** One append of a group commit (see group-commit.ts), with what is committed in the same transaction. */
export interface BatchAppend {
  tenantId: string;
  entry: ChainEntry;
  /** canonicalContent(entry): the bytes hashed before prev_hash */
  canonical: string;
  /** the decision's replay input (agw.decision.v1.DecisionInput as an audit_decision_inputs row) */
  replay?: DecisionInputRow;
  /** the decision event for the outbox; record_id (the tenant's: tenant_seq + 1) and record_hash are added by the append */
  event?: { subject: string; event: { event_id: string } & Record<string, unknown> };
  /** idempotency key: an append already written under it is answered with its record, not written again */
  appendKey?: string;
}

export interface BatchAppended {
  record: StoredRecord;
  /** the outbox row holding the event (null when the append carried none, or was replayed) */
  outboxId: number | null;
  /** the append key had been used: this is the record (and outbox event) the earlier attempt wrote */
  replayed: boolean;
  /** the event as written to the outbox (with record_id and record_hash) */
  event?: { subject: string; event: { event_id: string } & Record<string, unknown> };
}

/**
 * One append as the JSON object the append functions take (`p` of `audit_append_one`, an element of
 * `audit_append_batch`'s array): the record's fields under their column names, the canonical JSON the
 * function hashes before prev_hash, and what is committed with the record.
 */
export function appendPayload({ tenantId, entry: e, canonical, replay, event, appendKey }: BatchAppend): Record<string, unknown> {
  return {
    tenant_id: tenantId,
    canonical,
    ...recordFieldsOf(e),
    replay: replay ?? null,
    subject: event?.subject ?? null,
    event: event?.event ?? null,
    append_key: appendKey ?? null,
  };
}

/** A row of `audit_append_batch` / `audit_append_one`: the entry's position (1-based) and what was written for it. */
type AppendedRow = { ord: number; id: string; tenant_seq: string; prev_hash: string; record_hash: string; outbox_id: string | null; replayed: boolean };

export class AuditRecordRepository {
  constructor(private readonly db: Db) {}

  /**
   * Appends a batch in one statement and one transaction (`audit_append_batch`): each tenant's head row
   * locked, each record linked and hashed after it, with its replay input and outbox event when given; an
   * append key already used is answered with its record (`replayed`).
   * The batch is sent sorted by tenant (a stable sort: each tenant's records keep their order), so
   * concurrent batches lock head rows in the same order and cannot deadlock. Results in input order.
   * A batch of one goes to `audit_append_one` first (the same rows in one statement, for
   * a fraction of the batch function's fixed cost); when that writes nothing (the tenant's first append,
   * or an append key already used) the batch function takes the entry.
   */
  async appendBatch(items: readonly BatchAppend[]): Promise<BatchAppended[]> {
    const order = items.map((_, i) => i).sort((a, b) => (items[a].tenantId < items[b].tenantId ? -1 : items[a].tenantId > items[b].tenantId ? 1 : a - b));
    const payload = order.map((i) => appendPayload(items[i]));
    // prepared once per connection (preparedQuery): parse and plan were a sixth of a lone append's backend CPU
    let rows: AppendedRow[] = [];
    if (payload.length === 1) rows = await preparedQuery<AppendedRow>(this.db, 'audit_append_one', 'SELECT * FROM audit_append_one($1::jsonb)', [JSON.stringify(payload[0])]);
    if (!rows.length) rows = await preparedQuery<AppendedRow>(this.db, 'audit_append_batch', 'SELECT * FROM audit_append_batch($1::jsonb)', [JSON.stringify(payload)]);
    const out = new Array<BatchAppended>(items.length);
    for (const r of rows) {
      const i = order[r.ord - 1];
      const { entry, event } = items[i];
      const record: StoredRecord = { ...entry, id: Number(r.id), tenant_seq: Number(r.tenant_seq), prev_hash: r.prev_hash, record_hash: r.record_hash };
      out[i] = {
        record,
        outboxId: r.outbox_id === null ? null : Number(r.outbox_id),
        replayed: r.replayed,
        // as the append functions write it to the outbox: the tenant's record id, not the row key
        event: event && { subject: event.subject, event: { ...event.event, record_id: recordIdOf(record.tenant_seq), record_hash: record.record_hash } },
      };
    }
    return out;
  }

  /** `memberId`: only the records naming the member (`details.member.id`, or an approver in `details.approvers`). */
  async list(tenantId: string, o: { limit: number; sessionId?: string; chronological?: boolean; memberId?: string }): Promise<StoredRecord[]> {
    let q = this.db.selectFrom('audit_records').select(columns).where('tenant_id', '=', tenantId);
    if (o.sessionId) q = q.where('session_id', '=', o.sessionId);
    if (o.memberId) {
      const m = o.memberId;
      q = q.where(sql<boolean>`(details->'member'->>'id' = ${m} OR details->'approvers' @> jsonb_build_array(jsonb_build_object('id', ${m}::text)))`);
    }
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

  /**
   * The records with fromSeq <= tenant_seq < toSeq (toSeq null: to the end) in chain order, for verification
   * (a million of them): one index range scan on the unique (tenant_id, tenant_seq) index streamed by COPY
   * (copy-rows.ts: the rows arrive while Postgres reads on, without pg's per-field row parsing), each record
   * built straight from its fields' text. The same values as a SELECT through kysely: jsonb through
   * JSON.parse (what pg does with it), booleans from `t`/`f`, and requested_at as Date#toISOString of its
   * milliseconds (what pg's Date did: the fraction below a millisecond is dropped).
   */
  async *chainRecords(tenantId: string, fromSeq: number, toSeq: number | null): AsyncGenerator<ChainRecord[]> {
    const until = toSeq === null ? '' : ` AND tenant_seq < ${copyLiteral(toSeq)}`;
    const select = `SELECT ${CHAIN_RECORD_COLUMNS} FROM audit_records WHERE tenant_id = ${copyLiteral(tenantId)}::uuid AND tenant_seq >= ${copyLiteral(fromSeq)}${until} ORDER BY tenant_seq`;
    for await (const rows of copyRows(this.db, select)) yield rows.map(chainRecordOf);
  }

  /** The tenant's chain length as its head row counts it (0 without a chain). */
  async chainLength(tenantId: string): Promise<number> {
    const r = await this.db.selectFrom('audit_chain_heads').select('record_count').where('tenant_id', '=', tenantId).executeTakeFirst();
    return r ? Number(r.record_count) : 0;
  }

  /** The record at 0-based position `seq` of the tenant's chain (its record id is seq + 1). */
  async bySeq(tenantId: string, seq: number): Promise<StoredRecord | undefined> {
    const r = await this.db.selectFrom('audit_records').select(columns).where('tenant_id', '=', tenantId).where('tenant_seq', '=', seq).executeTakeFirst();
    return r ? toRecord(r as Row) : undefined;
  }

  async latest(tenantId: string): Promise<StoredRecord | undefined> {
    return (await this.list(tenantId, { limit: 1 }))[0];
  }

  /** Demo: overwrite one column of a record, keeping the original in audit_tamper_backups. */
  async tamper(tenantId: string, recordId: number, patch: { decision?: string; tool?: string; method?: string; params?: string }): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await lockTamperDemo(trx, tenantId);
      const original = await trx
        .selectFrom('audit_records')
        .select(['decision', 'tool', 'method', 'params'])
        .where('tenant_id', '=', tenantId)
        .where('id', '=', recordId)
        // locked: a restore running at the same time commits first, and the backup keeps the restored original
        // (without the lock a tamper racing a restore backed up the tampered value; found by the fault suite's R4)
        .forUpdate()
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
      await lockTamperDemo(trx, tenantId);
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

/**
 * Tampers and restores of one tenant run one at a time. Row locks alone were not enough: a restore that read
 * no backup could, in its later DELETE (a fresh READ COMMITTED snapshot), remove the backup of a tamper that
 * committed in between, leaving the record tampered with nothing to restore it from (seen once in CI).
 */
async function lockTamperDemo(trx: Transaction<Database>, tenantId: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext(${'tamper-demo:' + tenantId}))`.execute(trx);
}

// ---- read models: the other readers' queries on audit_records, each as narrow as its reader ----

export interface SessionTotals {
  session_id: string;
  governed: number;
  observed: number;
  denied: number;
  pending: number;
}

/**
 * Live totals of managed sessions, computed from the chain on every read (the spec: "computed live from
 * the audit log, not cached"). One grouped query over the (tenant_id, session_id) index.
 *
 * - governed: records with source `mcp_governed` (calls through the gateway's MCP server)
 * - observed: records with source `mcp_observed` (built-in tool use seen on the session's event stream)
 * - denied: governed records whose decision is `deny`
 * - pending: governed `requires_human` records with no human decision (a `control_plane` record of the
 *   same action, not a four-eyes vote, whose decision stays `requires_human`) appended since
 */
export class SessionTotalsReads {
  constructor(private readonly db: Db) {}

  async totals(tenantId: string, sessionIds: string[]): Promise<SessionTotals[]> {
    if (!sessionIds.length) return [];
    const { rows } = await sql<{ session_id: string; governed: string; observed: string; denied: string; pending: string }>`
      SELECT r.session_id,
        count(*) FILTER (WHERE r.source = 'mcp_governed') AS governed,
        count(*) FILTER (WHERE r.source = 'mcp_observed') AS observed,
        count(*) FILTER (WHERE r.source = 'mcp_governed' AND r.decision = 'deny') AS denied,
        count(*) FILTER (WHERE r.source = 'mcp_governed' AND r.decision = 'requires_human' AND NOT EXISTS (
          SELECT 1 FROM audit_records d
          WHERE d.tenant_id = r.tenant_id AND d.session_id = r.session_id AND d.action_id = r.action_id AND d.source = 'control_plane' AND d.decision <> 'requires_human'
        )) AS pending
      FROM audit_records r
      WHERE r.tenant_id = ${tenantId} AND r.session_id = ANY(${sessionIds}::text[])
      GROUP BY r.session_id`.execute(this.db);
    const found = new Map(rows.map((r) => [r.session_id, r]));
    return sessionIds.map((id) => {
      const r = found.get(id);
      return { session_id: id, governed: Number(r?.governed ?? 0), observed: Number(r?.observed ?? 0), denied: Number(r?.denied ?? 0), pending: Number(r?.pending ?? 0) };
    });
  }
}

export interface DecisionCount {
  day: string;
  decision: string;
  count: number;
}

/**
 * Aggregate counts of a tenant's records by UTC day and decision, for the tenant's public dashboard
 * (gateway: transparency/). Only counts leave: never a record, an id or a parameter. One grouped query
 * over the tenant's records of the period. Not counted: control-plane changes (decision `changed`: who
 * changed settings, keys, members) and four-eyes votes (a `control_plane` record whose decision stays
 * `requires_human`): they are not decisions on calls.
 */
export class DecisionCountsReads {
  constructor(private readonly db: Db) {}

  /** The last `days` UTC days (today included), oldest first. */
  async counts(tenantId: string, days: number): Promise<DecisionCount[]> {
    const n = Math.min(Math.max(Math.trunc(days) || 30, 1), 366);
    const { rows } = await sql<{ day: string; decision: string; count: string }>`
      SELECT to_char(date_trunc('day', requested_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD') AS day, decision, count(*) AS count
      FROM audit_records
      WHERE tenant_id = ${tenantId}
        AND NOT (source = 'control_plane' AND decision IN ('changed', 'requires_human'))
        AND requested_at >= date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' - make_interval(days => ${n - 1})
      GROUP BY 1, 2
      ORDER BY 1, 2`.execute(this.db);
    return rows.map((r) => ({ day: r.day, decision: r.decision, count: Number(r.count) }));
  }
}

/** The export's `summary` but for what the exporter adds (how many records it listed, whether it cut the list). */
export type RangeStats = Omit<ExportSummary, 'records_exported' | 'truncated'>;

/** The compliance export's reads: a tenant's records in a time range, and their statistics. */
export class ExportRangeReads {
  constructor(private readonly db: Db) {}

  /** Records with from <= requested_at < to in chain order, at most `limit`. */
  async records(tenantId: string, from: Date, to: Date, limit: number): Promise<StoredRecord[]> {
    const rows = await this.db
      .selectFrom('audit_records')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('requested_at', '>=', from)
      .where('requested_at', '<', to)
      .orderBy('tenant_seq', 'asc')
      .limit(limit)
      .execute();
    // every column, as the export has always listed them (presentStoredRecord picks what it shows)
    return rows.map((r) => ({
      ...(r as unknown as StoredRecord),
      id: Number(r.id),
      tenant_seq: Number(r.tenant_seq),
      requested_at: r.requested_at.toISOString(),
    }));
  }

  async stats(tenantId: string, from: Date, to: Date): Promise<RangeStats> {
    const rows = await sql<{ decision: string; severity: string; n: number }>`
      SELECT decision, severity, count(*)::bigint AS n FROM audit_records
      WHERE tenant_id = ${tenantId} AND requested_at >= ${from} AND requested_at < ${to}
      GROUP BY decision, severity`.execute(this.db);
    const agg = await sql<{ agents: number; tools: number; first_at: Date | null; last_at: Date | null }>`
      SELECT count(DISTINCT agent_id)::bigint AS agents, count(DISTINCT tool)::bigint AS tools, min(requested_at) AS first_at, max(requested_at) AS last_at
      FROM audit_records WHERE tenant_id = ${tenantId} AND requested_at >= ${from} AND requested_at < ${to}`.execute(this.db);
    const by_decision: Record<string, number> = {};
    const by_severity: Record<string, number> = {};
    let total = 0;
    for (const r of rows.rows) {
      const n = Number(r.n);
      total += n;
      by_decision[r.decision] = (by_decision[r.decision] ?? 0) + n;
      by_severity[r.severity] = (by_severity[r.severity] ?? 0) + n;
    }
    const a = agg.rows[0];
    return {
      total,
      by_decision,
      by_severity,
      distinct_agents: Number(a?.agents ?? 0),
      distinct_tools: Number(a?.tools ?? 0),
      first_at: a?.first_at ? a.first_at.toISOString() : null,
      last_at: a?.last_at ? a.last_at.toISOString() : null,
    };
  }
}

/** A record as a Merkle leaf. */
export interface LeafRecord {
  /** the global row key (internal: written to the tree head's from/to columns, never shown) */
  id: number;
  tenant_seq: number;
  record_hash: string;
  requested_at: string;
}

/** The Merkle tree build's read: a tenant's records as leaves. */
export class MerkleLeafReads {
  constructor(private readonly db: Db) {}

  /** The tenant's records from leaf `fromSeq` on, in chain order (`conn`: the build's transaction). */
  async leaves(tenantId: string, fromSeq: number, limit: number, conn: Conn = this.db): Promise<LeafRecord[]> {
    const rows = await conn
      .selectFrom('audit_records')
      .select(['id', 'tenant_seq', 'record_hash', 'requested_at'])
      .where('tenant_id', '=', tenantId)
      .where('tenant_seq', '>=', fromSeq)
      .orderBy('tenant_seq', 'asc')
      .limit(limit)
      .execute();
    return rows.map((r) => ({ id: Number(r.id), tenant_seq: Number(r.tenant_seq), record_hash: r.record_hash, requested_at: r.requested_at.toISOString() }));
  }
}

/**
 * An inclusion proof's record as a subquery ($1 tenant, $2 record hash): the tenant's record with this hash
 * (its first, should a hash repeat), as `tenant_seq, record_hash`. Text, not a query object, so that the
 * Merkle repository reads the record and its tree head in one statement (merkle.repository.ts, `recordAndHead`).
 */
export const RECORD_BY_HASH_SQL = 'SELECT tenant_seq, record_hash FROM audit_records WHERE tenant_id = $1 AND record_hash = $2 ORDER BY tenant_seq LIMIT 1';
