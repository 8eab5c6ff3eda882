/**
 * The approval queue: list, history, approve, reject; and GET /actions/{action_id}, the status of a queued
 * action (an agent-scoped key reads only the actions it queued, an MCP client's OAuth token only those its grant queued). Where the tenant's setting
 * `approvals_require_human` is on, approving and rejecting need a signed-in user's session token: an API
 * key, or a session token made from one, is refused with a 403 (docs/auth.md, "Approvals").
 */
import { type ApprovalRow, type ApprovalVote, ForbiddenError, NotFoundError, PENDING_LIST_LIMIT, PLATFORM_CONFIRMATION, QUEUE_REASONS } from '@agw/shared';
import { type Decider, approverOf } from '../../approvals/approval-queue';
import { Router } from 'express';
import { z } from 'zod';
import type { ApprovalsFeature } from '../../features/approvals.feature';
import { addPaths, optionalJsonBody, pathParam } from '../../openapi/openapi';
import { errors, reply, response, timestamp } from '../../openapi/schema';
import { isUuid, uuidParam } from '../params';
import { isHumanSession } from '../../tenants/auth-context';
import { type AuthContext, authOf } from '../request-context';
import { parseWith } from '../validation';
import { executionResultSchema } from './tool-calls.routes';

const decisionBody = z
  .object({ note: z.string().max(4000).optional(), reason: z.string().max(4000).optional() })
  .strict()
  .optional()
  .nullable();

export const approverSchema = z
  .object({
    member_id: z.string(),
    email: z.string(),
    approved_at: timestamp(),
  })
  .meta({ id: 'Approver', description: "a member's approval of a four-eyes action" });

export const approvalItemSchema = z
  .object({
    action_id: z.string(),
    agent_id: z.string(),
    tool: z.string(),
    method: z.string(),
    params: z.record(z.string(), z.unknown()).meta({ description: 'as stored: personal data is an encrypted envelope {"$pii": …}' }),
    queued_at: timestamp(),
    opa_result: z.object({ requires_human: z.boolean(), violations: z.array(z.string()), severity: z.string() }),
    queue_reason: z.string().meta({ description: 'policy | fail_to_queue | session_config | platform_confirmation (a managed session’s platform asked before running the tool: docs/managed.md)' }),
    session_id: z.string().optional(),
    platform_tool_use_id: z.string().optional().meta({ description: 'platform_confirmation: the agent platform’s tool-use event id the decision answers (user.tool_confirmation)' }),
    expires_at: timestamp().nullable().meta({ description: 'when the action expires if nobody decides (approval_expiry_seconds)' }),
    params_sha256: z.string().nullable().meta({ description: 'SHA-256 of the params the agent sent: an approval is bound to them' }),
    bundle_revision: z.string().nullable().meta({ description: 'the policy bundle revision the action was evaluated under' }),
    required_approvers: z.number().int().meta({ description: 'distinct members who must approve it (four eyes when 2 or more; docs/auth.md, "Four-eyes approvals")' }),
    approvals: z.array(approverSchema).meta({ description: 'four eyes: the members who approved so far, oldest first (empty for a one-approver action)' }),
    initiator_member_ids: z
      .array(z.string())
      .meta({ description: 'four eyes: the members who started the action (its session, the issuer of its API key, the consenter of its OAuth grant) and so cannot approve it; empty for a one-approver action' }),
  })
  .meta({ id: 'ApprovalQueueItem' });

export const approvalBindingSchema = z
  .object({ params_sha256: z.string(), evaluated_bundle_revision: z.string(), bundle_revision: z.string() })
  .meta({ id: 'ApprovalBinding', description: 'the exact call a decision was made on (docs/auth.md, "Approvals")' });

const historyItemSchema = approvalItemSchema.extend({
  status: z.enum(['pending', 'approved', 'rejected', 'expired']),
  decided_at: timestamp().nullable(),
  decided_by: z.string().nullable(),
  note: z.string().nullable(),
  execution: z.record(z.string(), z.unknown()).nullable(),
  approval_binding: z.record(z.string(), z.unknown()).nullable(),
  retried_at: timestamp().nullable(),
});

const pendingResponse = z.object({
  pending: z.array(approvalItemSchema),
  total: z.number().int().meta({ description: `how many pending actions match: more than the list holds when over ${PENDING_LIST_LIMIT}` }),
});
const pendingQuery = z.object({
  queue_reason: z.enum(QUEUE_REASONS).optional(),
  action_id: z.string().refine(isUuid, 'action_id must be a UUID (an action_id of this tenant’s queue)').optional(),
});
const historyResponse = z.object({ history: z.array(historyItemSchema), count: z.number().int() });
const decisionResponse = z.object({
  status: z.enum(['approved', 'rejected']),
  action_id: z.string(),
  execution_mode: z.enum(['agent_direct', 'gateway_brokered']).optional(),
  execution_result: executionResultSchema.optional(),
  approval_binding: approvalBindingSchema,
});
/** An approval of a four-eyes action that does not meet the quorum yet (202): who approved so far, how many are needed. */
const quorumPendingResponse = z
  .object({
    status: z.literal('pending'),
    action_id: z.string(),
    approvals: z.array(approverSchema),
    required: z.number().int().meta({ description: 'distinct members who must approve' }),
  })
  .meta({ id: 'QuorumPending' });
const actionStatusResponse = z.object({
  action_id: z.string(),
  status: z.enum(['pending', 'approved', 'rejected', 'expired']),
  agent_id: z.string(),
  tool: z.string(),
  method: z.string(),
  queued_at: timestamp(),
  expires_at: timestamp().nullable(),
  decided_at: timestamp().nullable(),
  params_sha256: z.string().nullable(),
  bundle_revision: z.string().nullable(),
  execution_mode: z.enum(['agent_direct', 'gateway_brokered']).nullable(),
  retry_allowed: z.boolean().meta({ description: 'approved agent_direct action not retried yet: the agent may send the same call with approved_action_id' }),
  retried_at: timestamp().nullable(),
  required_approvers: z.number().int().meta({ description: 'distinct members who must approve it (four eyes when 2 or more)' }),
  approval_count: z.number().int().meta({ description: 'four eyes: members who approved so far' }),
  execution_result: z
    .object({ status_code: z.number().int(), body: z.unknown(), outcome: z.string().optional() })
    .nullable()
    .optional()
    .meta({ description: 'an approved call the gateway executed: the upstream status and answer (for a federated tool its MCP CallToolResult, docs/federation.md)' }),
});

const item = (a: ApprovalRow, votes: FourEyes): z.infer<typeof approvalItemSchema> => ({
  action_id: a.action_id,
  agent_id: a.agent_id,
  tool: a.tool,
  method: a.method,
  params: a.params,
  queued_at: a.queued_at.toISOString(),
  opa_result: a.opa_result,
  queue_reason: a.queue_reason,
  ...(a.session_id ? { session_id: a.session_id } : {}),
  ...(a.platform_tool_use_id ? { platform_tool_use_id: a.platform_tool_use_id } : {}),
  expires_at: a.expires_at?.toISOString() ?? null,
  params_sha256: a.params_sha256,
  bundle_revision: a.bundle_revision,
  required_approvers: a.required_approvers,
  approvals: (votes.votes.get(a.action_id) ?? []).map(approverOf),
  initiator_member_ids: votes.initiators.get(a.action_id) ?? [],
});

interface FourEyes {
  votes: Map<string, ApprovalVote[]>;
  initiators: Map<string, string[]>;
}

/** The four-eyes rows' approvals so far and (`withInitiators`, pending ones) who started them. */
async function withVotes(d: Pick<ApprovalsFeature, 'approvals'>, tenantId: string, rows: ApprovalRow[], withInitiators = false): Promise<FourEyes> {
  const fourEyes = rows.filter((r) => r.required_approvers > 1);
  const initiators = new Map<string, string[]>();
  if (withInitiators) for (const r of fourEyes) initiators.set(r.action_id, await d.approvals.initiators(tenantId, r));
  return { votes: await d.approvals.votes(tenantId, fourEyes.map((r) => r.action_id)), initiators };
}

export { isHumanSession };

/**
 * Where the tenant's `approvals_require_human` is on, a human decision (an approval, a rejection, a
 * quarantined tool definition approved) needs a signed-in user's session token: a 403 otherwise.
 */
export async function assertMayDecide(d: Pick<ApprovalsFeature, 'settings'>, auth: AuthContext, what: string): Promise<void> {
  if (!isHumanSession(auth) && (await d.settings.stored(auth.tenantId)).approvals_require_human) {
    throw new ForbiddenError(
      `Approvals of this tenant require a signed-in human (setting approvals_require_human): sign in (POST /api/auth/login) and send the session token; ${auth.method === 'jwt' ? 'a session token made from an API key' : 'an API key'} cannot ${what}`,
    );
  }
}

/** Who decided, as the records name them. */
export const deciderOf = (auth: AuthContext) => (auth.method === 'jwt' && auth.email ? (auth.viaApiKey ? `api_key_session:${auth.email}` : auth.email) : `api_key:${auth.tenantId}`);

/** The decider a four-eyes vote needs: a member's own session names the member. */
export const deciderFor = (auth: AuthContext): Decider => ({
  name: deciderOf(auth),
  ...(isHumanSession(auth) && auth.userId && auth.email ? { member: { id: auth.userId, email: auth.email } } : {}),
  caller: auth.method === 'jwt' ? 'a session token made from an API key' : auth.method === 'api_key' ? 'an API key' : 'this caller',
});

export function approvalRoutes(d: ApprovalsFeature): Router {
  const r = Router();
  r.get('/approvals', async (req, res) => {
    const { tenantId } = authOf(req);
    const q = parseWith(pendingQuery, req.query, 'query');
    const filter = { queueReason: q.queue_reason, actionId: q.action_id?.toLowerCase() };
    const rows = await d.approvals.pending(tenantId, filter);
    const total = rows.length < PENDING_LIST_LIMIT ? rows.length : await d.approvals.countPending(tenantId, filter);
    const votes = await withVotes(d, tenantId, rows, true);
    reply(res, pendingResponse, { pending: rows.map((a) => item(a, votes)), total });
  });
  r.get('/approvals/history', async (req, res) => {
    const { tenantId } = authOf(req);
    const rows = await d.approvals.history(tenantId);
    const votes = await withVotes(d, tenantId, rows);
    reply(res, historyResponse, {
      history: rows.map((a) => ({
        ...item(a, votes),
        status: a.status,
        decided_at: a.decided_at?.toISOString() ?? null,
        decided_by: a.decided_by,
        note: a.note,
        execution: a.execution,
        approval_binding: a.decision_binding,
        retried_at: a.retried_at?.toISOString() ?? null,
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
      await assertMayDecide(d, auth, 'approve or reject');
      const decided = await d.approvals.decide(auth.tenantId, actionId, status, deciderFor(auth), body?.note ?? body?.reason ?? null);
      if (decided.status === 'pending') reply(res, quorumPendingResponse, decided, 202);
      else reply(res, decisionResponse, decided);
    });
  }
  r.get('/actions/:action_id', async (req, res) => {
    const auth = authOf(req);
    const actionId = uuidParam(req.params.action_id, 'Queued action');
    const a = await d.approvals.get(auth.tenantId, actionId);
    // an agent key sees the actions it queued, an OAuth token those of its grant (its keyHash is
    // `oauth-grant:<grant id>`, what the MCP server records as the requester, whichever token of the grant
    // made the call); anything else is as unknown as another tenant's
    if (!a || ((auth.keyScope === 'agent' || auth.method === 'oauth') && a.requested_by_key !== auth.keyHash)) throw new NotFoundError('Queued action not found');
    reply(res, actionStatusResponse, {
      action_id: a.action_id,
      status: a.status,
      agent_id: a.agent_id,
      tool: a.tool,
      method: a.method,
      queued_at: a.queued_at.toISOString(),
      expires_at: a.expires_at?.toISOString() ?? null,
      decided_at: a.decided_at?.toISOString() ?? null,
      params_sha256: a.params_sha256,
      bundle_revision: a.bundle_revision,
      execution_mode: a.status !== 'approved' ? null : a.execution ? 'gateway_brokered' : 'agent_direct',
      // approved, agent_direct, not retried yet: the agent may now send the same call with approved_action_id
      retry_allowed: a.status === 'approved' && !a.execution && !a.retried_at && a.queue_reason !== PLATFORM_CONFIRMATION,
      retried_at: a.retried_at?.toISOString() ?? null,
      required_approvers: a.required_approvers,
      approval_count: a.required_approvers > 1 ? ((await d.approvals.votes(auth.tenantId, [a.action_id])).get(a.action_id)?.length ?? 0) : a.status === 'approved' ? 1 : 0,
      execution_result: a.execution && 'result' in a.execution ? { status_code: Number(a.execution.status_code), body: a.execution.result, ...(a.execution.outcome ? { outcome: String(a.execution.outcome) } : {}) } : null,
    });
  });
  return r;
}

const actionPath = [pathParam('action_id', { type: 'string', format: 'uuid' })];
const decide = (what: string) => ({
  post: {
    summary: `${what} a pending action (an approved brokered call is executed now)`,
    parameters: actionPath,
    requestBody: optionalJsonBody(decisionBody.unwrap().unwrap()),
    responses: {
      200: response('decided', decisionResponse),
      ...(what === 'Approve' ? { 202: response('four eyes: this approval is counted, the quorum is not met yet (nothing executed)', quorumPendingResponse) } : {}),
      403: errors[403](
        what === 'Approve'
          ? 'approvals_require_human and the caller is no signed-in human; or four eyes: the caller is no member, or started the action (its initiator never counts)'
          : 'approvals_require_human and the caller is no signed-in human',
      ),
      404: errors[404]('unknown, or of another tenant'),
      409: errors[409](what === 'Approve' ? 'not pending (decided already), or four eyes: this member approved it already' : 'not pending (decided already)'),
      422: errors[422](),
    },
  },
});
addPaths({
  '/approvals': {
    get: {
      summary: `Pending actions of the tenant, oldest first (at most ${PENDING_LIST_LIMIT}: decide or filter to see newer ones)`,
      parameters: [
        {
          name: 'queue_reason',
          in: 'query',
          description: 'only the actions queued for this reason: a managed session’s platform confirmations (platform_confirmation) ahead of a long policy queue, for instance',
          schema: { type: 'string', enum: [...QUEUE_REASONS] },
        },
        { name: 'action_id', in: 'query', description: 'only this action, while it waits (where an approval link points)', schema: { type: 'string', format: 'uuid' } },
      ],
      responses: { 200: response('the queue', pendingResponse), 422: errors[422]('an unknown queue_reason, or an action_id that is not a UUID') },
    },
  },
  '/approvals/history': { get: { summary: 'Decided actions with who decided, when and the note', responses: { 200: response('past decisions', historyResponse) } } },
  '/approve/{action_id}': decide('Approve'),
  '/reject/{action_id}': decide('Reject'),
});
addPaths({
  '/actions/{action_id}': {
    get: {
      summary: 'Status of a queued action (pending, approved, rejected, expired); an agent-scoped key sees only the actions it queued',
      parameters: actionPath,
      responses: { 200: response('the queued action', actionStatusResponse), 404: errors[404]('no queued action with this id for this caller'), 422: errors[422]() },
    },
  },
});
