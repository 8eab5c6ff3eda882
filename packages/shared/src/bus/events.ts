/**
 * Event contracts on NATS JetStream: the subjects and payload schemas, defined once here.
 *
 * Subjects (all prefixed with AGW_STREAM_PREFIX when set, to isolate test fleets):
 * - `decisions.<tenant_id>.<kind>` (kind: allowed | denied | pending | observed | approved | rejected | expired | quarantined | witness_refused | policy),
 *   stream DECISIONS: one event per governance decision, published after the audit record is committed;
 *   `decisions.<tenant_id>.<kind>.session` for a decision with a `session_id` (a managed session's or an agent's own), so
 *   the managed service subscribes to those alone (`decisions.*.*.session`) instead of reading every
 *   decision of the fleet. `decisions.>` (the webhook service) takes both.
 * - `nohook.decisions.<tenant_id>.<kind>[.session]`, the same stream: the same events of a tenant that had no
 *   webhook URL when its decision was recorded (the gateway says so from its settings cache, AppendRequest.
 *   tenant_has_webhook). The webhook service's consumer (`decisions.>`) is never handed them: no delivery, no
 *   ack, no wake-up for the events no webhook waits for (docs/webhooks.md, "Which events reach the webhook
 *   service"). Every other reader takes both roots (`decisionSubjectRoots`).
 * - `audit.tree.<tenant_id>`, stream AUDIT: a Merkle tree head was built.
 * - `audit.records.<tenant_id>`, stream AUDIT: a record another service asks the audit service to append
 *   (the vault's control_plane records; record-requests.ts).
 * - `sessions.<tenant_id>.<kind>`, stream SESSIONS: managed-session lifecycle (interrupted, ...).
 */
import { z } from 'zod';
import { decisionEventFields } from '../action-record';
import { recordShape } from '../record-schema';

/**
 * `quarantined`: a federated tool's definition was quarantined (a control_plane record, docs/federation.md);
 * `witness_refused`: a witness refused the tenant's checkpoint (a control_plane record, docs/evidence.md);
 * `policy`: a change of the tenant's policy that a human should know of (a control_plane record: an activation
 * over failing tests, a shadow started, promoted, discarded or ended; docs/policy.md);
 * `authorization_required`: an upstream's OAuth connection was lost (refused or revoked; docs/federation.md,
 * "Upstreams that need OAuth").
 */
export const decisionKinds = ['allowed', 'denied', 'pending', 'observed', 'approved', 'rejected', 'expired', 'quarantined', 'witness_refused', 'policy', 'authorization_required'] as const;
export type DecisionKind = (typeof decisionKinds)[number];

/**
 * One decision: the record's fields the event carries (`recordFieldsInEvent`, action-record.ts; their
 * schemas made from the record's field kinds, record-schema.ts), with the event's own.
 */
export const DecisionEventSchema = z.object({
  /** unique per event; also the JetStream message id (publish is deduplicated) */
  event_id: z.string(),
  kind: z.enum(decisionKinds),
  tenant_id: z.string(),
  ...recordShape(decisionEventFields),
  /** the tenant's record id: tenant_seq + 1 (recordIdOf, docs/audit.md "Record ids"), never the global row key */
  record_id: z.number().int(),
  record_hash: z.string(),
  /** kind `policy` only: the record's details (the override's note, the shadow's counts, …) */
  details: z.record(z.string(), z.unknown()).optional(),
});
export type DecisionEvent = z.infer<typeof DecisionEventSchema>;

export const TreeBuiltEventSchema = z.object({
  event_id: z.string(),
  tenant_id: z.string(),
  tree_index: z.number().int(),
  merkle_root: z.string(),
  record_count: z.number().int(),
  period_start: z.string(),
  period_end: z.string(),
});
export type TreeBuiltEvent = z.infer<typeof TreeBuiltEventSchema>;

export const SessionEventSchema = z.object({
  event_id: z.string(),
  kind: z.string(),
  tenant_id: z.string(),
  session_id: z.string(),
  agent_id: z.string(),
  data: z.record(z.string(), z.unknown()),
  occurred_at: z.string(),
});
export type SessionEvent = z.infer<typeof SessionEventSchema>;

export interface StreamDef {
  name: string;
  subjects: string[];
}

/** The streams of the fleet, for a given prefix. */
export function streams(prefix = ''): { decisions: StreamDef; audit: StreamDef; sessions: StreamDef } {
  const p = prefix ? `${prefix}.` : '';
  const n = prefix ? `${prefix}_` : '';
  return {
    decisions: { name: `${n}DECISIONS`, subjects: decisionSubjectRoots(prefix).map((root) => `${root}>`) },
    audit: { name: `${n}AUDIT`, subjects: [`${p}audit.>`] },
    sessions: { name: `${n}SESSIONS`, subjects: [`${p}sessions.>`] },
  };
}

/**
 * The two roots of decision subjects, each ending in a dot: `decisions.` (the webhook service reads these)
 * and `nohook.decisions.` (decisions of a tenant without a webhook URL; nobody's consumer skips them unread).
 */
export function decisionSubjectRoots(prefix = ''): [hooked: string, nohook: string] {
  const p = prefix ? `${prefix}.` : '';
  return [`${p}decisions.`, `${p}nohook.decisions.`];
}

export const subjects = {
  /**
   * A decision event's subject; `sessionId` set: the session-bound subject (one more token, `session`);
   * `webhook` false (the tenant had no webhook URL): under `nohook.`, which the webhook service never receives.
   */
  decision: (prefix: string, tenantId: string, kind: DecisionKind, sessionId?: string | null, webhook = true) =>
    `${decisionSubjectRoots(prefix)[webhook ? 0 : 1]}${tenantId}.${kind}${sessionId ? '.session' : ''}`,
  /** what the webhook service's durable consumer reads: the decisions of tenants with a webhook URL */
  webhookDecisions: (prefix: string) => `${decisionSubjectRoots(prefix)[0]}>`,
  /** every session-bound decision of the fleet (what the managed service reads), one pattern per root */
  sessionDecisions: (prefix: string) => decisionSubjectRoots(prefix).map((root) => `${root}*.*.session`),
  treeBuilt: (prefix: string, tenantId: string) => `${prefix ? `${prefix}.` : ''}audit.tree.${tenantId}`,
  session: (prefix: string, tenantId: string, kind: string) => `${prefix ? `${prefix}.` : ''}sessions.${tenantId}.${kind}`,
};
