/** The approval queue: list, history, approve, reject. */
import { Router } from 'express';
import { z } from 'zod';
import type { ApprovalRow } from '../../approvals/approval.repository';
import type { GatewayDeps } from '../../deps';
import { uuidParam } from '../params';
import { authOf } from '../request-context';
import { parseWith } from '../validation';

const decisionBody = z
  .object({ note: z.string().max(4000).optional(), reason: z.string().max(4000).optional() })
  .strict()
  .optional()
  .nullable();

const item = (a: ApprovalRow) => ({
  action_id: a.action_id,
  agent_id: a.agent_id,
  tool: a.tool,
  method: a.method,
  params: a.params,
  queued_at: a.queued_at.toISOString(),
  opa_result: a.opa_result,
  queue_reason: a.queue_reason,
  ...(a.session_id ? { session_id: a.session_id } : {}),
});

export function approvalRoutes(d: GatewayDeps): Router {
  const r = Router();
  r.get('/approvals', async (req, res) => {
    res.json({ pending: (await d.approvals.pending(authOf(req).tenantId)).map(item) });
  });
  r.get('/approvals/history', async (req, res) => {
    const rows = await d.approvals.history(authOf(req).tenantId);
    res.json({
      history: rows.map((a) => ({
        ...item(a),
        status: a.status,
        decided_at: a.decided_at?.toISOString() ?? null,
        decided_by: a.decided_by,
        note: a.note,
        execution: a.execution,
      })),
      count: rows.length,
    });
  });
  for (const [path, status] of [
    ['/approve/:action_id', 'approved'],
    ['/reject/:action_id', 'rejected'],
  ] as const) {
    r.post(path, async (req, res) => {
      const auth = authOf(req);
      const actionId = uuidParam(req.params.action_id, 'Pending action');
      const body = parseWith(decisionBody, req.body && Object.keys(req.body).length ? req.body : undefined, 'body');
      const by = auth.email ?? `api_key:${auth.tenantId}`;
      res.json(await d.approvals.decide(auth.tenantId, actionId, status, by, body?.note ?? body?.reason ?? null));
    });
  }
  return r;
}
