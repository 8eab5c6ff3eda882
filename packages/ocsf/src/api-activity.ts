/**
 * One audit record as an OCSF event of class API Activity (6003, category Application Activity), schema
 * 1.8.0, with the Security Control profile (the decision as `action_id` / `disposition_id`, the policy, the
 * alert). The mapping field by field is in docs/evidence.md ("OCSF for the SIEM"); what OCSF has no
 * attribute for (the chain's hashes, the violations' ids, the stored params, the decision's details) is kept
 * under `unmapped`, so nothing of the record is lost and the hashes lead back to the chain.
 */
import { OCSF_VERSION } from './ocsf-schema';

/**
 * An audit record as the API and the compliance export present it (docs/audit.md); a decision event on NATS
 * carries the same fields except those marked optional (then left out of the event).
 */
export interface PresentedRecord {
  id: number;
  action_id: string;
  agent_id: string;
  agent_type: string;
  agent_version?: string | null;
  tool: string;
  method: string;
  params?: unknown;
  decision: string;
  violations: string[];
  severity: string;
  alert_tier: string | null;
  requires_human: boolean;
  execution_mode?: string | null;
  source: string;
  session_id: string | null;
  bundle_revision?: string;
  details?: Record<string, unknown> | null;
  requested_at: string;
  prev_hash?: string;
  record_hash: string;
  leaf_index?: number;
}

export interface OcsfContext {
  tenantId: string;
  /** the gateway's version, as `metadata.product.version` */
  productVersion: string;
}

export const API_ACTIVITY_CLASS_UID = 6003;
export const OCSF_PROFILES = ['security_control'] as const;

const SEVERITY_ID: Record<string, number> = { none: 1, low: 2, medium: 3, high: 4, critical: 5 };
const SEVERITY_NAME: Record<number, string> = { 0: 'Unknown', 1: 'Informational', 2: 'Low', 3: 'Medium', 4: 'High', 5: 'Critical' };
/** Reads of a resource or a prompt are OCSF's Read; anything else an agent calls is Other, named by its method. */
const READS = new Set(['resources/read', 'prompts/get', 'resources/list', 'prompts/list', 'tools/list']);

type Outcome = { action_id: number; action: string; disposition_id: number; disposition: string; status_id: number; status: string };

/** What each decision was, in the Security Control profile's terms and the API call's status. */
const OUTCOMES = new Map<string, Outcome>([
  ['allow', { action_id: 1, action: 'Allowed', disposition_id: 1, disposition: 'Allowed', status_id: 1, status: 'Success' }],
  ['deny', { action_id: 2, action: 'Denied', disposition_id: 2, disposition: 'Blocked', status_id: 2, status: 'Failure' }],
  ['requires_human', { action_id: 99, action: 'Escalated', disposition_id: 14, disposition: 'Delayed', status_id: 99, status: 'Pending' }],
  ['approved', { action_id: 1, action: 'Allowed', disposition_id: 8, disposition: 'Approved', status_id: 1, status: 'Success' }],
  ['rejected', { action_id: 2, action: 'Denied', disposition_id: 25, disposition: 'Rejected', status_id: 2, status: 'Failure' }],
  ['observed', { action_id: 99, action: 'Observed', disposition_id: 17, disposition: 'Logged', status_id: 1, status: 'Success' }],
]);

/** A decision OCSF has no word for is Other (99), named by itself. */
function outcome(r: PresentedRecord): Outcome {
  return OUTCOMES.get(r.decision) ?? { action_id: 99, action: r.decision, disposition_id: 99, disposition: r.decision, status_id: 99, status: r.decision };
}

export function toApiActivity(r: PresentedRecord, ctx: OcsfContext): Record<string, unknown> {
  const activityId = READS.has(r.method) ? 2 : 99;
  const severityId = SEVERITY_ID[r.severity] ?? 0;
  const o = outcome(r);
  const time = Date.parse(r.requested_at);
  return {
    category_uid: 6,
    category_name: 'Application Activity',
    class_uid: API_ACTIVITY_CLASS_UID,
    class_name: 'API Activity',
    activity_id: activityId,
    activity_name: activityId === 2 ? 'Read' : r.method,
    type_uid: API_ACTIVITY_CLASS_UID * 100 + activityId,
    type_name: `API Activity: ${activityId === 2 ? 'Read' : 'Other'}`,
    time,
    severity_id: severityId,
    severity: SEVERITY_NAME[severityId],
    status_id: o.status_id,
    status: o.status,
    ...(r.violations.length ? { status_detail: r.violations.join(', ') } : {}),
    message: `${r.decision} ${r.method} ${r.tool} by ${r.agent_id}${r.violations.length ? ` (${r.violations.join(', ')})` : ''}`,
    action_id: o.action_id,
    action: o.action,
    disposition_id: o.disposition_id,
    disposition: o.disposition,
    is_alert: r.alert_tier != null,
    ...(r.bundle_revision ? { policy: { uid: r.bundle_revision, name: 'agw tenant policy', version: r.bundle_revision, is_applied: true } } : {}),
    metadata: {
      version: OCSF_VERSION,
      profiles: [...OCSF_PROFILES],
      product: { name: 'Agent Governance Gateway', vendor_name: 'agw', version: ctx.productVersion },
      uid: `${ctx.tenantId}:${r.id}`,
      correlation_uid: r.action_id,
      tenant_uid: ctx.tenantId,
      log_name: 'agw-audit',
      log_provider: 'agw audit chain',
      sequence: r.id,
      original_time: r.requested_at,
    },
    actor: {
      app_name: r.agent_type,
      app_uid: r.agent_id,
      ...(r.session_id ? { session: { uid: r.session_id } } : {}),
    },
    api: {
      operation: r.tool,
      request: { uid: r.action_id },
      service: { name: r.source },
      ...(r.agent_version ? { version: r.agent_version } : {}),
    },
    src_endpoint: { name: r.agent_id },
    unmapped: {
      record_id: r.id,
      record_hash: r.record_hash,
      ...(r.prev_hash ? { prev_hash: r.prev_hash } : {}),
      ...(r.leaf_index != null ? { leaf_index: r.leaf_index } : {}),
      decision: r.decision,
      method: r.method,
      violations: r.violations,
      alert_tier: r.alert_tier,
      requires_human: r.requires_human,
      execution_mode: r.execution_mode ?? null,
      source: r.source,
      params: r.params ?? null,
      details: r.details ?? null,
    },
  };
}

/** Events as JSON Lines (one event per line, a final newline), the form SIEM file imports read. */
export function toJsonLines(events: readonly unknown[]): string {
  return events.map((e) => JSON.stringify(e)).join('\n') + (events.length ? '\n' : '');
}
