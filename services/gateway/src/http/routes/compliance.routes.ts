/**
 * The compliance export (/compliance/export/{tenant_id}): the tenant's evidence package as JSON, PDF, OCSF or
 * OPA decision-log lines, put together by the compliance module (src/compliance, docs/compliance-export.md).
 * Another tenant's id is a 404.
 */
import { NotFoundError } from '@agw/shared';
import { Router } from 'express';
import { z } from 'zod';
import type { AuditFeature } from '../../features/audit.feature';
import { addPaths, pathParam, queryParam } from '../../openapi/openapi';
import { errors } from '../../openapi/schema';
import { uuidParam } from '../params';
import { authOf } from '../request-context';
import { parseWith } from '../validation';

const exportQuery = z.object({
  from: z.string().max(40).optional(),
  to: z.string().max(40).optional(),
  format: z.enum(['json', 'pdf', 'ocsf', 'opa'], { error: "format must be 'json', 'pdf', 'ocsf' or 'opa'" }).default('json'),
});

export function complianceRoutes(d: Pick<AuditFeature, 'complianceExport'>): Router {
  const r = Router();
  r.get('/compliance/export/:tenant_id', async (req, res) => {
    const auth = authOf(req);
    const tenantId = uuidParam(String(req.params.tenant_id), 'Tenant');
    if (tenantId !== auth.tenantId.toLowerCase()) throw new NotFoundError('Tenant not found');
    const q = parseWith(exportQuery, { from: req.query.from, to: req.query.to, format: req.query.format }, 'query');
    const out = await d.complianceExport.export(auth.tenantId, { from: q.from, to: q.to, format: q.format });
    res.setHeader('content-type', out.contentType);
    res.setHeader('content-disposition', `${q.format === 'json' ? 'inline' : 'attachment'}; filename="${out.filename}"`);
    res.send(Buffer.from(out.content));
  });
  return r;
}

addPaths({
  '/compliance/export/{tenant_id}': {
    get: {
      summary: 'The tenant’s evidence package (docs/compliance-export.md)',
      parameters: [
        pathParam('tenant_id', { type: 'string', format: 'uuid' }),
        queryParam('from', { type: 'string', description: 'YYYY-MM-DD or ISO 8601 timestamp' }),
        queryParam('to', { type: 'string', description: 'YYYY-MM-DD (inclusive) or ISO 8601 timestamp' }),
        queryParam('format', { type: 'string', enum: ['json', 'pdf', 'ocsf', 'opa'], default: 'json', description: 'ocsf: the records only, as OCSF 1.8.0 API Activity events in JSON Lines (docs/evidence.md); opa: the policy decisions as OPA decision-log events in JSON Lines (docs/policy.md)' }),
      ],
      responses: {
        200: {
          description: 'the package: JSON (audit records in range, chain verification, Merkle summary, anchors, sample proofs, policy snapshot; checked offline by agw-verify) or a PDF report',
          content: { 'application/json': { schema: { type: 'object' } }, 'application/pdf': { schema: { type: 'string', contentMediaType: 'application/pdf' } }, 'application/x-ndjson': { schema: { type: 'string', description: 'one OCSF API Activity event (format=ocsf) or OPA decision-log event (format=opa) per line, JSON' } } },
        },
        404: errors[404]('another tenant'),
        422: errors[422]('bad dates or format'),
      },
    },
  },
});
