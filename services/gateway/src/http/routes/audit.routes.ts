/** Audit reads (log, verify) and the tamper demo. Replay, erasure and Merkle routes live with their features. */
import type { audit } from '@agw/proto';
import { Router } from 'express';
import { z } from 'zod';
import { type ActionRecord, NotFoundError, fromAnswerJson, fromAuditEntry, jsonField, presentStoredRecord, recordShape } from '@agw/shared';
import type { AuditFeature } from '../../features/audit.feature';
import { addPaths, optionalJsonBody, pathParam, queryParam } from '../../openapi/openapi';
import { errorSchema, errors, reply, response } from '../../openapi/schema';
import { localProfileOnly } from '../profile-exposure';
import { isUuid } from '../params';
import { authOf } from '../request-context';
import { parseWith } from '../validation';

/**
 * An audit record as the API shows it (spec: "Audit record"): the tenant's id, the record's fields (their
 * schemas made from the record message's field list, @agw/shared record-schema.ts), the hashes.
 */
export const auditRecordSchema = z
  .object({
    id: z.number().int().meta({ description: 'the record’s id in this tenant’s chain: 1 for its first record, tenant_seq + 1 (docs/audit.md, "Record ids")' }),
    ...recordShape(),
    prev_hash: z.string(),
    record_hash: z.string(),
  })
  .meta({ id: 'AuditRecord', description: 'One record of the tenant’s hash chain (docs/audit.md)' });
export type PresentedRecord = z.infer<typeof auditRecordSchema>;
// the schema's fields have the record's types
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const sameFields: Same<Omit<PresentedRecord, 'id' | 'prev_hash' | 'record_hash'>, ActionRecord> = true;
void sameFields;

export function presentRecord(r: audit.AuditRecord): PresentedRecord {
  // the id is the tenant's (tenant_seq + 1), derived here too: the global row key is never shown
  return presentStoredRecord({ ...fromAuditEntry(r.entry!, (json, field) => fromAnswerJson(json, field, {}) as Record<string, unknown>), tenant_seq: r.tenant_seq, prev_hash: r.prev_hash, record_hash: r.record_hash }) as PresentedRecord;
}

const logResponse = z.object({ records: z.array(auditRecordSchema), count: z.number().int() });
const verifyResponse = z.union([
  z.object({ valid: z.literal(true), record_count: z.number().int() }),
  z.object({ valid: z.literal(false), record_count: z.number().int(), failed_at_action_id: z.string(), failed_at_record_id: z.number().int().meta({ description: 'the tenant’s record id of the first failing record (as GET /audit/log shows it)' }), reason: z.string().meta({ description: 'hash_mismatch | …' }) }),
]);
const tamperResponse = z.object({ status: z.literal('tampered'), action_id: z.string(), field: z.string(), message: z.string() });
const restoreResponse = z.object({ status: z.literal('restored'), records_restored: z.number().int() });

const logQuery = z.object({
  limit: z.coerce.number({ error: 'limit must be an integer' }).int('limit must be an integer').min(1).max(1000, 'limit must be at most 1000').default(200),
  member: z
    .string()
    .refine(isUuid, 'member must be a member id (a UUID, as GET /api/members lists them)')
    .optional()
    .meta({ description: 'only the records that name this member: as the actor (details.member.id) or as one of the approvers (details.approvers[].id)' }),
});

const tamperBody = z
  .object({
    action_id: z.string().refine(isUuid, 'action_id must be a UUID (an action_id of this tenant’s log)').optional(),
    field: z.enum(['decision', 'tool', 'method', 'params']).optional(),
    value: z.unknown().optional(),
  })
  .strict();

export function auditRoutes(d: Pick<AuditFeature, 'audit' | 'config'>): Router {
  const r = Router();
  r.get('/audit/log', async (req, res) => {
    const { limit, member } = parseWith(logQuery, { limit: req.query.limit, member: req.query.member }, 'query');
    const { records } = await d.audit.listRecords({ tenant_id: authOf(req).tenantId, limit, session_id: '', chronological: false, member_id: member ?? '' });
    reply(res, logResponse, { records: records.map(presentRecord), count: records.length });
  });
  // the records of one action (a governed call and what followed it: a human's decision, an execution), oldest first
  r.get('/audit/actions/:action_id', async (req, res) => {
    const actionId = req.params.action_id ?? '';
    if (!isUuid(actionId)) throw new NotFoundError('Action not found');
    const { records } = await d.audit.getByAction({ tenant_id: authOf(req).tenantId, action_id: actionId.toLowerCase() });
    if (!records.length) throw new NotFoundError('Action not found');
    reply(res, logResponse, { records: records.map(presentRecord), count: records.length });
  });
  r.get('/audit/verify', async (req, res) => {
    const v = await d.audit.verify({ tenant_id: authOf(req).tenantId });
    reply(
      res,
      verifyResponse,
      v.valid
        ? { valid: true, record_count: v.record_count }
        : { valid: false, record_count: v.record_count, failed_at_action_id: v.failed_at_action_id, failed_at_record_id: v.failed_at_record_id, reason: v.reason },
    );
  });
  r.post('/audit/tamper-simulate', localProfileOnly(d.config.profile), async (req, res) => {
    const body = parseWith(tamperBody, req.body ?? {}, 'body');
    const out = await d.audit.tamperSimulate({
      tenant_id: authOf(req).tenantId,
      action_id: body.action_id ?? '',
      field: body.field ?? '',
      ...jsonField('value', body.value),
    });
    reply(res, tamperResponse, { status: 'tampered', action_id: out.action_id, field: body.field ?? 'decision', message: 'GET /api/audit/verify now reports the chain as broken; POST /api/audit/tamper-restore undoes it.' });
  });
  r.post('/audit/tamper-restore', localProfileOnly(d.config.profile), async (req, res) => {
    const out = await d.audit.tamperRestore({ tenant_id: authOf(req).tenantId });
    reply(res, restoreResponse, { status: 'restored', records_restored: out.records });
  });
  return r;
}

const demoOnly = errors[404]('absent outside the local profile');
addPaths({
  '/audit/log': {
    get: {
      summary: 'The tenant’s audit records, newest first',
      parameters: [
        queryParam('limit', { type: 'integer', minimum: 1, maximum: 1000, default: 200 }),
        {
          name: 'member',
          in: 'query',
          description: 'only the records that name this member (a member id): as the actor (details.member.id) or as an approver (details.approvers[].id); docs/audit.md, "Who acted"',
          schema: { type: 'string', format: 'uuid' },
        },
      ],
      responses: { 200: response('records', logResponse), 422: errors[422]('limit out of range, or member not a UUID') },
    },
  },
  '/audit/actions/{action_id}': {
    get: {
      summary: 'The records of one action (its decision and what followed it), oldest first: where a shadow’s samples link',
      parameters: [pathParam('action_id', { type: 'string', format: 'uuid' })],
      responses: { 200: response('records', logResponse), 404: errors[404]('no record of this action for this tenant') },
    },
  },
  '/audit/verify': { get: { summary: 'Verify the tenant’s hash chain', responses: { 200: response('the verification result', verifyResponse) } } },
  '/audit/tamper-simulate': {
    post: { summary: 'Demo only (local profile): alter one stored record', requestBody: optionalJsonBody(tamperBody), responses: { 200: response('tampered', tamperResponse), 404: response('no such record, or the production profile (the demo is absent there)', errorSchema), 422: errors[422]() } },
  },
  '/audit/tamper-restore': { post: { summary: 'Demo only (local profile): undo the tampering', responses: { 200: response('restored', restoreResponse), 404: demoOnly } } },
});
