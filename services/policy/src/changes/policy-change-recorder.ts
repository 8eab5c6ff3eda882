/**
 * Changes of a tenant's policy that a human must be able to find later are evidence: each is appended to the
 * tenant's hash chain as a `control_plane` record (tool `policy`, method the operation, decision what
 * happened, `agent_id` who did it, details what it was about) with the decision event `policy`, which the
 * webhook service delivers as `policy.changed` to tenants subscribed to it (docs/policy.md, docs/webhooks.md).
 * Decisions: `activated_over_failing_tests` (a human's override of the tests gate, with its note and the
 * failing tests as violations), `shadow_started`, `shadow_promoted`, `shadow_discarded`, `shadow_ended`, and for
 * a tenant's OPA bundles `bundle_activated`, `bundle_shadowed` (put in shadow) and `bundle_refused` (unsigned,
 * wrongly signed, or its tests fail: the live policy stays).
 * The append is sent again under the same key a few times (the audit service answers a key it has written
 * with that record); a caller that needs the record before acting awaits it.
 */
import { randomUUID } from 'node:crypto';
import type { audit } from '@agw/proto';
import { type CallOptions, type Logger, controlPlaneRecord, toAuditEntry } from '@agw/shared';

export type PolicyChangeDecision =
  | 'activated_over_failing_tests'
  | 'shadow_started'
  | 'shadow_promoted'
  | 'shadow_discarded'
  | 'shadow_ended'
  | 'bundle_activated'
  | 'bundle_shadowed'
  | 'bundle_refused';

export interface PolicyChangeFact {
  decision: PolicyChangeDecision;
  /** member e-mail, api_key:<tenant>, or `policy-service` for what the service did by itself (a shadow's end) */
  actor: string;
  /** the operation: activate, shadow.start, shadow.promote, shadow.discard, shadow.end */
  method: string;
  /** failing test names (an override), or the rules that made the candidate differ (a shadow) */
  violations: string[];
  severity: 'none' | 'low' | 'medium' | 'high';
  /** the bundle revision the change is about (the candidate's) */
  revision: string;
  details: Record<string, unknown>;
}

export interface PolicyChangeRecorder {
  /** resolves to the record's action id once the audit service has committed it */
  record(tenantId: string, fact: PolicyChangeFact): Promise<string>;
}

export interface AuditAppender {
  append(req: audit.AppendRequest, options?: CallOptions): Promise<unknown>;
}

export function policyChangeRecord(f: PolicyChangeFact, now = new Date()) {
  return controlPlaneRecord(
    { action_id: randomUUID(), agent_id: f.actor, agent_type: 'control_plane', agent_version: '1.0.0', tool: 'policy', method: f.method, session_id: null, requested_at: now.toISOString() },
    {
      params: {},
      decision: f.decision,
      violations: f.violations,
      severity: f.severity,
      requires_human: f.decision === 'activated_over_failing_tests',
      bundle_revision: f.revision,
      details: f.details,
    },
  );
}

export function auditPolicyChangeRecorder(audit: AuditAppender, logger: Logger, attempts = 3): PolicyChangeRecorder {
  return {
    async record(tenantId, fact) {
      const record = policyChangeRecord(fact);
      const request = { tenant_id: tenantId, entry: toAuditEntry(record), event_kind: 'policy', append_key: `policy:${record.action_id}` } as audit.AppendRequest;
      // any failure is sent again under the record's one key (the client's retry loop, packages/shared/src/grpc-retry.ts)
      await audit.append(request, { retry: { attempts, delayMs: 250, backoff: 2, when: () => true } });
      logger.info({ tenantId, decision: fact.decision, actor: fact.actor, revision: fact.revision, action_id: record.action_id }, 'policy change recorded');
      return record.action_id;
    },
  };
}
