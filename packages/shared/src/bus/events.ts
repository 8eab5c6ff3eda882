/**
 * Event contracts on NATS JetStream: the subjects and payload schemas, defined once here.
 *
 * Subjects (all prefixed with AGW_STREAM_PREFIX when set, to isolate test fleets):
 * - `decisions.<tenant_id>.<kind>` (kind: allowed | denied | pending | observed | approved | rejected | expired | quarantined),
 *   stream DECISIONS: one event per governance decision, published after the audit record is committed;
 *   `decisions.<tenant_id>.<kind>.session` for a decision with a `session_id` (a managed session's or an agent's own), so
 *   the managed service subscribes to those alone (`decisions.*.*.session`) instead of reading every
 *   decision of the fleet. `decisions.>` (the webhook service, the stream) takes both.
 * - `audit.tree.<tenant_id>`, stream AUDIT: a Merkle tree head was built.
 * - `sessions.<tenant_id>.<kind>`, stream SESSIONS: managed-session lifecycle (interrupted, ...).
 */
import { z } from 'zod';

/** `quarantined`: a federated tool's definition was quarantined (a control_plane record, docs/federation.md). */
export const decisionKinds = ['allowed', 'denied', 'pending', 'observed', 'approved', 'rejected', 'expired', 'quarantined'] as const;
export type DecisionKind = (typeof decisionKinds)[number];

export const DecisionEventSchema = z.object({
  /** unique per event; also the JetStream message id (publish is deduplicated) */
  event_id: z.string(),
  kind: z.enum(decisionKinds),
  tenant_id: z.string(),
  action_id: z.string(),
  agent_id: z.string(),
  agent_type: z.string(),
  tool: z.string(),
  method: z.string(),
  decision: z.string(),
  violations: z.array(z.string()),
  severity: z.string(),
  alert_tier: z.string().nullable(),
  requires_human: z.boolean(),
  source: z.string(),
  session_id: z.string().nullable(),
  /** the tenant's record id: tenant_seq + 1 (recordIdOf, docs/audit.md "Record ids"), never the global row key */
  record_id: z.number().int(),
  record_hash: z.string(),
  requested_at: z.string(),
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
    decisions: { name: `${n}DECISIONS`, subjects: [`${p}decisions.>`] },
    audit: { name: `${n}AUDIT`, subjects: [`${p}audit.>`] },
    sessions: { name: `${n}SESSIONS`, subjects: [`${p}sessions.>`] },
  };
}

export const subjects = {
  /** a decision event's subject; `sessionId` set: the session-bound subject (one more token, `session`) */
  decision: (prefix: string, tenantId: string, kind: DecisionKind, sessionId?: string | null) => `${prefix ? `${prefix}.` : ''}decisions.${tenantId}.${kind}${sessionId ? '.session' : ''}`,
  /** every session-bound decision of the fleet (what the managed service reads) */
  sessionDecisions: (prefix: string) => `${prefix ? `${prefix}.` : ''}decisions.*.*.session`,
  treeBuilt: (prefix: string, tenantId: string) => `${prefix ? `${prefix}.` : ''}audit.tree.${tenantId}`,
  session: (prefix: string, tenantId: string, kind: string) => `${prefix ? `${prefix}.` : ''}sessions.${tenantId}.${kind}`,
};
