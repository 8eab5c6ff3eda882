/**
 * Which decision becomes which webhook event, who is subscribed to it, and the payload of the spec:
 * `{event, timestamp, data: {action_id, agent_id, tool, method, decision, violations, severity, requires_human}}`.
 *
 * - allowed -> `action.allowed`, denied -> `action.denied`, pending -> `action.pending`.
 * - A tenant subscribed to `action.pending_approval` (the alias one guide uses) gets pending actions too;
 *   the payload then carries the name it subscribed with. Subscribed to both, it gets `action.pending` once.
 * - expired -> `action.expired` (a queued action nobody decided in time; not a default: subscribe to it).
 * - quarantined -> `tool.quarantined` (a federated tool's definition changed or was flagged, docs/federation.md;
 *   `tool` is the upstream, `method` the tool, `violations` the reason; not a default: subscribe to it).
 * - witness_refused -> `evidence.witness_refused` (a witness refused the tenant's checkpoint: it saw another
 *   view of the log, docs/evidence.md "Witnesses"; `method` is the witness; not a default: subscribe to it).
 * - policy -> `policy.changed` (docs/policy.md: an activation over failing tests, a shadow started, promoted,
 *   discarded or ended, an OPA bundle activated, put in shadow or refused; `decision` says which, `agent_id` who, `violations` the failing tests; `details` the
 *   record's details, e.g. the override's note; not a default: subscribe to it).
 * - authorization_required -> `upstream.authorization_required` (an upstream's OAuth connection was lost: a
 *   refresh refused or its token revoked; `tool` is the upstream, `method` `oauth.authorization_required`;
 *   not a default: subscribe to it).
 * - Other decision kinds (observed, approved, rejected) are not webhook events.
 * - Session events (`sessions.<tenant>.interrupted`, `sessions.<tenant>.anomaly_detected`, published by the
 *   managed service) become `session.interrupted` and `anomaly.detected` for tenants that subscribed to
 *   them explicitly (they are not in the defaults). An anomaly.detected payload adds the score, the
 *   signals that fired, the threshold and the observed tool. The spec shows no payload beyond the interrupt
 *   operation, so `data` carries what that operation defines: session_id, agent_id, the audit action id of
 *   the interrupt and its reason.
 */
import { randomUUID } from 'node:crypto';
import type { DecisionEvent, SessionEvent } from '@agw/shared';

export const WEBHOOK_EVENTS = ['action.allowed', 'action.denied', 'action.pending', 'action.pending_approval', 'action.expired', 'anomaly.detected', 'session.interrupted', 'tool.quarantined', 'evidence.witness_refused', 'policy.changed', 'upstream.authorization_required'] as const;
/** What a tenant gets when its settings name no events (the gateway shows the same default). */
export const DEFAULT_EVENTS = ['action.allowed', 'action.denied', 'action.pending'];
export const TEST_EVENT = 'webhook.test';
export const TEST_EVENTS = [TEST_EVENT, 'action.allowed', 'action.denied', 'action.pending', 'action.pending_approval'] as const;
export type TestEvent = (typeof TEST_EVENTS)[number];

export interface ActionData {
  action_id: string;
  agent_id: string;
  tool: string;
  method: string;
  decision: string;
  violations: string[];
  severity: string;
  requires_human: boolean;
  /** policy.changed only: the control_plane record's details (the override's note, the shadow's figures) */
  details?: Record<string, unknown>;
}

export interface SessionData {
  session_id: string;
  agent_id: string;
  action_id: string | null;
  reason: string | null;
  /** anomaly.detected: the observed event's score (0-1), the signals that fired and the tenant's threshold */
  anomaly_score?: number;
  signals?: string[];
  threshold?: number;
  tool?: string;
}

export interface WebhookPayload<D = ActionData> {
  event: string;
  timestamp: string;
  data: D;
}

/** A webhook's body: its event, when it happened (as ISO 8601) and its data. */
const webhookPayload = <D>(event: string, at: string | Date, data: D): WebhookPayload<D> => ({ event, timestamp: new Date(at).toISOString(), data });

const KIND_TO_EVENT: Partial<Record<DecisionEvent['kind'], string>> = {
  allowed: 'action.allowed',
  denied: 'action.denied',
  pending: 'action.pending',
  expired: 'action.expired',
  quarantined: 'tool.quarantined',
  witness_refused: 'evidence.witness_refused',
  policy: 'policy.changed',
  authorization_required: 'upstream.authorization_required',
};

/** The event name to deliver for this decision to a tenant subscribed to `subscribed`, or null. */
export function webhookEventFor(kind: DecisionEvent['kind'], subscribed: readonly string[] | undefined): string | null {
  const event = KIND_TO_EVENT[kind];
  if (!event) return null;
  const events = subscribed ?? DEFAULT_EVENTS;
  if (events.includes(event)) return event;
  if (event === 'action.pending' && events.includes('action.pending_approval')) return 'action.pending_approval';
  return null;
}

const SESSION_KIND_TO_EVENT: Record<string, string> = { interrupted: 'session.interrupted', anomaly_detected: 'anomaly.detected' };

/** The event name for a session event, or null when it is not a webhook event or not subscribed. */
export function webhookEventForSession(kind: string, subscribed: readonly string[] | undefined): string | null {
  const event = SESSION_KIND_TO_EVENT[kind];
  return event && (subscribed ?? DEFAULT_EVENTS).includes(event) ? event : null;
}

export function payloadFromSession(event: string, e: SessionEvent): WebhookPayload<SessionData> {
  const text = (v: unknown) => (typeof v === 'string' ? v : null);
  return webhookPayload<SessionData>(event, e.occurred_at, {
    session_id: e.session_id,
    agent_id: e.agent_id,
    action_id: text(e.data.audit_action_id),
    reason: text(e.data.reason),
    ...(e.kind === 'anomaly_detected'
      ? { anomaly_score: Number(e.data.anomaly_score), signals: (e.data.signals as string[]) ?? [], threshold: Number(e.data.threshold), tool: text(e.data.tool) ?? undefined }
      : {}),
  });
}

export function payloadFromDecision(event: string, e: DecisionEvent): WebhookPayload {
  return webhookPayload<ActionData>(event, e.requested_at, {
    action_id: e.action_id,
    agent_id: e.agent_id,
    tool: e.tool,
    method: e.method,
    decision: e.decision,
    violations: e.violations,
    severity: e.severity,
    requires_human: e.requires_human,
    ...(e.kind === 'policy' && e.details ? { details: e.details } : {}),
  });
}

/** A sample payload for the test-delivery endpoint (recognizable by agent `webhook-test`). */
export function testPayload(event: TestEvent, now = new Date()): WebhookPayload {
  const denied = event === 'action.denied';
  const pending = event === 'action.pending' || event === 'action.pending_approval';
  return webhookPayload<ActionData>(event, now, {
    action_id: randomUUID(),
    agent_id: 'webhook-test',
    tool: 'svc_webhook_test',
    method: 'ping',
    decision: denied ? 'deny' : pending ? 'requires_human' : 'allow',
    violations: denied ? ['webhook_test_violation'] : [],
    severity: denied ? 'high' : 'none',
    requires_human: pending,
  });
}
