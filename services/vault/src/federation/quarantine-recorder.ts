/**
 * A quarantine is evidence: each one is appended to the tenant's hash chain as a `control_plane` record
 * (tool = the upstream, method = the tool, decision `quarantine`, the reason as its violation, the hashes,
 * markers and diff in `details`) with the decision event `quarantined`, which the webhook service delivers
 * as `tool.quarantined` (docs/federation.md). The catalog row is written first: a quarantine whose record
 * could not be sent still blocks the tool. The vault service sends its records on the AUDIT stream
 * (`streamedRecordAppender`, packages/shared/src/bus/record-requests.ts), where they wait for the audit
 * service; a publish that fails is sent again under the same key a few times.
 * An upstream that flaps between definitions is recorded once per tool and alert window
 * (FEDERATION_QUARANTINE_ALERT_WINDOW_MS); the next record says how many were not (`suppressed_since_last`).
 */
import { randomUUID } from 'node:crypto';
import { type ActionRecord, type CallOptions, type Logger, controlPlaneRecord, toAuditEntry } from '@agw/shared';
import type { audit } from '@agw/proto';
import type { ConnectionRecorder, QuarantineRecorder } from './federation';
import type { Quarantine } from './tool-pinning';

export interface AuditAppender {
  append(req: audit.AppendRequest, options?: CallOptions): Promise<unknown>;
}

export function quarantineRecord(upstream: string, q: Quarantine, now = new Date(), suppressed = 0): ActionRecord {
  return controlPlaneRecord(
    { action_id: randomUUID(), agent_id: 'gateway-federation', agent_type: 'control_plane', agent_version: '1.0.0', tool: upstream, method: q.tool, session_id: null, requested_at: now.toISOString() },
    {
      params: {},
      decision: 'quarantine',
      violations: [q.reason],
      severity: q.reason === 'approval_required' ? 'low' : 'high',
      alert_tier: q.reason === 'approval_required' ? null : 'escalate',
      requires_human: true,
      bundle_revision: 'federation-pin',
      details: {
        event: 'tool.quarantined',
        reason: q.reason,
        pinned_sha256: q.pinned_sha256,
        candidate_sha256: q.candidate_sha256,
        markers: q.markers,
        diff: q.diff.slice(0, 50),
        // quarantines of this tool not recorded since its last record (an upstream that flaps: one record per window)
        ...(suppressed ? { suppressed_since_last: suppressed } : {}),
      },
    },
  );
}

export function auditQuarantineRecorder(audit: AuditAppender, logger: Logger, attempts = 3): QuarantineRecorder {
  return {
    async record(tenantId, upstream, q, suppressed = 0) {
      const record = quarantineRecord(upstream, q, new Date(), suppressed);
      const request = { tenant_id: tenantId, entry: toAuditEntry(record), event_kind: 'quarantined', append_key: `quarantine:${record.action_id}` };
      // any failure is sent again under the record's one key (the client's retry loop, packages/shared/src/grpc-retry.ts)
      await audit.append(request, { retry: { attempts, delayMs: 500, backoff: 2, when: () => true } });
      logger.warn({ tenantId, upstream, tool: q.tool, reason: q.reason, action_id: record.action_id }, 'federated tool quarantined');
    },
  };
}

/**
 * An upstream OAuth connection's lifecycle is evidence too (docs/federation.md, "Upstreams that need OAuth"):
 * connected, lost (`authorization_required`: a refresh refused, a 401 after one, or none for a human who
 * calls) and disconnected are `control_plane` records (tool = the upstream, method `oauth.<event>`, the
 * connection's human in `details.user_id`, never a token). A lost connection is the decision event
 * `authorization_required`, which the webhook service delivers as `upstream.authorization_required`.
 */
export function connectionRecord(upstream: string, e: Parameters<ConnectionRecorder['record']>[2], now = new Date()): ActionRecord {
  const lost = e.event === 'authorization_required';
  return controlPlaneRecord(
    { action_id: randomUUID(), agent_id: 'gateway-federation', agent_type: 'control_plane', agent_version: '1.0.0', tool: upstream, method: `oauth.${e.event}`, session_id: null, requested_at: now.toISOString() },
    {
      params: {},
      decision: lost ? 'deny' : 'allow',
      violations: lost ? ['upstream_authorization_required'] : [],
      severity: lost ? 'medium' : 'low',
      alert_tier: null,
      requires_human: lost,
      bundle_revision: 'federation-oauth',
      details: {
        event: `upstream.${e.event}`,
        connection: e.user_id ? 'per_user' : 'shared',
        user_id: e.user_id || null,
        ...(e.by ? { by: e.by } : {}),
        ...(e.reason ? { reason: e.reason } : {}),
      },
    },
  );
}

export function auditConnectionRecorder(audit: AuditAppender, logger: Logger, attempts = 3): ConnectionRecorder {
  return {
    async record(tenantId, upstream, e) {
      const record = connectionRecord(upstream, e);
      const request = { tenant_id: tenantId, entry: toAuditEntry(record), event_kind: e.event === 'authorization_required' ? 'authorization_required' : 'observed', append_key: `upstream-oauth:${record.action_id}` };
      await audit.append(request, { retry: { attempts, delayMs: 500, backoff: 2, when: () => true } });
      logger.info({ tenantId, upstream, event: e.event, user_id: e.user_id || null, action_id: record.action_id }, 'upstream connection event');
    },
  };
}
