/** Worker thread of chain-verify.ts: verifies one range of a tenant's chain on its own connection. */
import { parentPort, workerData } from 'node:worker_threads';
import { createDb } from '@agw/shared';
import { AuditRecordRepository } from './audit-record.repository';
import { verifyRange } from './chain-verify';

const { databaseUrl, tenantId, fromSeq, toSeq } = workerData as { databaseUrl: string; tenantId: string; fromSeq: number; toSeq: number | null };

void (async () => {
  const db = createDb(databaseUrl, { max: 2 });
  try {
    parentPort?.postMessage({ ok: true, result: await verifyRange(new AuditRecordRepository(db), tenantId, fromSeq, toSeq) });
  } catch (e) {
    parentPort?.postMessage({ ok: false, error: e instanceof Error ? e.message : String(e) });
  } finally {
    await db.destroy();
  }
})();
