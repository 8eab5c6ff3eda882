/** Audit reads (log, verify) and the tamper demo. Replay, erasure and Merkle routes live with their features. */
import type { audit } from '@agw/proto';
import { Router } from 'express';
import { z } from 'zod';
import { fromAuditEntry, presentStoredRecord } from '@agw/shared';
import type { GatewayDeps } from '../../deps';
import { isUuid } from '../params';
import { authOf } from '../request-context';
import { parseWith } from '../validation';

/** An audit record as the API shows it (spec: "Audit record"). */
export function presentRecord(r: audit.AuditRecord) {
  const parse = (text: string) => JSON.parse(text || '{}') as Record<string, unknown>;
  return presentStoredRecord({ ...fromAuditEntry(r.entry!, parse), id: r.id, prev_hash: r.prevHash, record_hash: r.recordHash });
}

const logQuery = z.object({
  limit: z.coerce.number({ error: 'limit must be an integer' }).int('limit must be an integer').min(1).max(1000, 'limit must be at most 1000').default(200),
});

const tamperBody = z
  .object({
    action_id: z.string().refine(isUuid, 'action_id must be a UUID (an action_id of this tenant’s log)').optional(),
    field: z.enum(['decision', 'tool', 'method', 'params']).optional(),
    value: z.unknown().optional(),
  })
  .strict();

export function auditRoutes(d: GatewayDeps): Router {
  const r = Router();
  r.get('/audit/log', async (req, res) => {
    const { limit } = parseWith(logQuery, { limit: req.query.limit }, 'query');
    const { records } = await d.audit.listRecords({ tenantId: authOf(req).tenantId, limit, sessionId: '', chronological: false });
    res.json({ records: records.map(presentRecord), count: records.length });
  });
  r.get('/audit/verify', async (req, res) => {
    const v = await d.audit.verify({ tenantId: authOf(req).tenantId });
    res.json(
      v.valid
        ? { valid: true, record_count: v.recordCount }
        : { valid: false, record_count: v.recordCount, failed_at_action_id: v.failedAtActionId, failed_at_record_id: v.failedAtRecordId, reason: v.reason },
    );
  });
  r.post('/audit/tamper-simulate', async (req, res) => {
    const body = parseWith(tamperBody, req.body ?? {}, 'body');
    const out = await d.audit.tamperSimulate({
      tenantId: authOf(req).tenantId,
      actionId: body.action_id ?? '',
      field: body.field ?? '',
      valueJson: body.value === undefined ? '' : JSON.stringify(body.value),
    });
    res.json({ status: 'tampered', action_id: out.actionId, field: body.field ?? 'decision', message: 'GET /api/audit/verify now reports the chain as broken; POST /api/audit/tamper-restore undoes it.' });
  });
  r.post('/audit/tamper-restore', async (req, res) => {
    const out = await d.audit.tamperRestore({ tenantId: authOf(req).tenantId });
    res.json({ status: 'restored', records_restored: out.records });
  });
  return r;
}
