/**
 * Verification of a tenant's hash chain (GET /api/audit/verify), fast enough for millions of records.
 *
 * What is checked is exactly the sequential walk's: in chain order, each record's prev_hash must be the
 * previous record's record_hash (`GENESIS` for the first) and its record_hash must recompute from its
 * stored fields (record-hash.ts). The answer names the first record in chain order that fails, and
 * `record_count` counts the records verified before it.
 *
 * How it is fast:
 * - a range's records are read by one index range scan streamed with COPY (chainRecords,
 *   copy-rows.ts): Postgres reads on while this thread hashes, and no pg row parsing per field;
 * - the canonical JSON and SHA-256 skip per-record waste (record-hash.ts);
 * - a long chain is split by tenant_seq into consecutive ranges verified at the same time, one in this
 *   thread and the others in worker threads (chain-verify.worker.ts, each with its own connection). A
 *   range checks every link inside it and every hash; the link INTO each range (its first record's
 *   prev_hash against the previous non-empty range's last record_hash, GENESIS for the first) is checked
 *   here when the ranges are joined, in chain order, so the first failure found is the sequential walk's.
 *   The last range is open-ended: records committed before its read began are verified too (those
 *   appended after the head's count was read).
 */
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { recordIdOf } from '@agw/shared';
import type { AuditRecordRepository } from './audit-record.repository';
import { GENESIS, recordHash } from './record-hash';

/**
 * What a range of the chain found; `first.prev_hash` is checked by the caller (the link into the range).
 * Records are named by the tenant's record id (`recordIdOf(tenant_seq)`), never by the global row key.
 */
export interface RangeResult {
  count: number;
  first?: { prev_hash: string; action_id: string; record_id: number };
  last_hash?: string;
  /** the first record of the range that fails its link inside the range or its hash; `index` records after the range's start */
  fail?: { index: number; action_id: string; record_id: number };
}

export interface VerifyResult {
  valid: boolean;
  record_count: number;
  failed_at_action_id?: string;
  /** the tenant's record id of the first failing record: its position in the chain as stored, plus 1 */
  failed_at_record_id?: number;
  reason?: 'hash_mismatch';
}

/** Verify the records with fromSeq <= tenant_seq < toSeq (toSeq null: to the end), in chain order. */
export async function verifyRange(records: AuditRecordRepository, tenantId: string, fromSeq: number, toSeq: number | null): Promise<RangeResult> {
  const out: RangeResult = { count: 0 };
  let prev: string | undefined;
  for await (const batch of records.chainRecords(tenantId, fromSeq, toSeq)) {
    for (const r of batch) {
      if (prev === undefined) {
        out.first = { prev_hash: r.prev_hash, action_id: r.action_id, record_id: recordIdOf(r.tenant_seq) };
        prev = r.prev_hash;
      }
      if (r.prev_hash !== prev || recordHash(r, prev) !== r.record_hash) {
        out.fail = { index: out.count, action_id: r.action_id, record_id: recordIdOf(r.tenant_seq) };
        return out; // leaving the loop ends the read (copy-rows.ts)
      }
      prev = r.record_hash;
      out.count++;
    }
  }
  if (prev !== undefined) out.last_hash = prev;
  return out;
}

/** Join consecutive ranges in chain order into the answer of one sequential walk. */
export function joinRanges(ranges: RangeResult[]): VerifyResult {
  let prev = GENESIS;
  let count = 0;
  for (const r of ranges) {
    if (!r.first) continue; // an empty range (e.g. records deleted): the next link must still match
    if (r.first.prev_hash !== prev) return { valid: false, record_count: count, failed_at_action_id: r.first.action_id, failed_at_record_id: r.first.record_id, reason: 'hash_mismatch' };
    if (r.fail) return { valid: false, record_count: count + r.fail.index, failed_at_action_id: r.fail.action_id, failed_at_record_id: r.fail.record_id, reason: 'hash_mismatch' };
    count += r.count;
    prev = r.last_hash as string;
  }
  return { valid: true, record_count: count };
}

export interface ParallelVerifyOptions {
  /** Postgres URL for the worker threads' own connections */
  databaseUrl: string;
  /** ranges verified at the same time (this thread + threads - 1 workers); 1 = sequential */
  threads: number;
  /** chains shorter than this are verified in this thread only (a worker costs ~0.1-0.3 s to start) */
  minRecords?: number;
}

/** The compiled worker (dist/chain/chain-verify.worker.js), also when this module runs from source in tests. */
function workerFile(): string {
  const here = path.join(__dirname, 'chain-verify.worker.js');
  return __filename.endsWith('.ts') ? path.join(__dirname, '../../dist/chain/chain-verify.worker.js') : here;
}

function runWorker(databaseUrl: string, tenantId: string, fromSeq: number, toSeq: number | null): Promise<RangeResult> {
  return new Promise((resolve, reject) => {
    const w = new Worker(workerFile(), { workerData: { databaseUrl, tenantId, fromSeq, toSeq } });
    let settled = false;
    w.once('message', (m: { ok: true; result: RangeResult } | { ok: false; error: string }) => {
      settled = true;
      if (m.ok) resolve(m.result);
      else reject(new Error(`chain verification worker failed: ${m.error}`));
    });
    w.once('error', (e) => {
      settled = true;
      reject(e);
    });
    w.once('exit', (code) => {
      if (!settled) reject(new Error(`chain verification worker exited with code ${code}`));
    });
  });
}

/**
 * Verify a tenant's chain of about `length` records (its head's record_count; records appended meanwhile
 * are verified too), split over `threads` ranges when it is long enough.
 */
export async function verifyChain(records: AuditRecordRepository, tenantId: string, length: number, parallel?: ParallelVerifyOptions): Promise<VerifyResult> {
  const threads = parallel ? Math.max(1, Math.floor(parallel.threads)) : 1;
  if (!parallel || threads === 1 || length < (parallel.minRecords ?? 100_000)) return joinRanges([await verifyRange(records, tenantId, 0, null)]);
  const bounds = Array.from({ length: threads + 1 }, (_, k) => Math.floor((k * length) / threads));
  const ranges = await Promise.all(
    Array.from({ length: threads }, (_, k) => {
      const to = k === threads - 1 ? null : bounds[k + 1];
      return k === 0 ? verifyRange(records, tenantId, bounds[k], to) : runWorker(parallel.databaseUrl, tenantId, bounds[k], to);
    }),
  );
  return joinRanges(ranges);
}
