/**
 * The SIEM export: every decision event of a tenant that configured `siem_export` is posted to its
 * collector as an OCSF API Activity event (@agw/ocsf, docs/evidence.md "OCSF for the SIEM"), a batch per
 * tenant per request, through the same guarded HTTPS sender as the webhooks (no private addresses, no
 * redirects, bounded). Bodies:
 * - `splunk_hec`: Splunk HTTP Event Collector events (`{"time", "host", "source", "sourcetype", "event"}`,
 *   one JSON object per line), `Authorization: Splunk <token>`;
 * - `jsonl`: the OCSF events, one per line (`application/x-ndjson`), `Authorization: Bearer <token>` when a
 *   token is set.
 * Signed like the webhooks (`X-Service-Signature`, HMAC-SHA256 of the raw body with the tenant's webhook
 * secret) when the tenant has one. A 2xx acks the tenant's events; anything else leaves them to be
 * redelivered (at least once: a collector deduplicates by `metadata.uid`, tenant id and record id).
 */
import { type PresentedRecord, toApiActivity } from '@agw/ocsf';
import type { ConsumedItem, Counter, DecisionEvent, Logger } from '@agw/shared';
import type { TenantWebhook } from '../delivery/tenant-webhook.repository';
import { SIGNATURE_HEADER, signBody } from '../delivery/webhook.signer';
import type { SendRequest, SendResult } from '../target/https-sender';

export const SIEM_SOURCETYPE = 'ocsf:api_activity';
const PRODUCT_VERSION: string = (require('../../package.json') as { version: string }).version;

export interface SiemExportDeps {
  tenants: { cached(tenantId: string): Promise<TenantWebhook> };
  sender: { send(req: SendRequest): Promise<SendResult> };
  /** the tenant's webhook signing secret (null: none), and its collector token (null: none) */
  webhookSecret: (tenantId: string, t: TenantWebhook) => Promise<string | null>;
  siemToken: (tenantId: string, sealed: string) => Promise<string>;
  events: Counter<'outcome'>;
  logger: Logger;
}

/** A decision event as the record it announces (the event leaves out params, details, hashes' links). */
export function recordOfEvent(e: DecisionEvent): PresentedRecord {
  return {
    id: e.record_id,
    action_id: e.action_id,
    agent_id: e.agent_id,
    agent_type: e.agent_type,
    tool: e.tool,
    method: e.method,
    decision: e.decision,
    violations: e.violations,
    severity: e.severity,
    alert_tier: e.alert_tier,
    requires_human: e.requires_human,
    source: e.source,
    session_id: e.session_id,
    requested_at: e.requested_at,
    record_hash: e.record_hash,
  };
}

/** The request body of one tenant's batch in the collector's format. */
export function siemBody(format: 'splunk_hec' | 'jsonl', tenantId: string, events: DecisionEvent[]): { body: string; contentType: string } {
  const ocsf = events.map((e) => toApiActivity(recordOfEvent(e), { tenantId, productVersion: PRODUCT_VERSION }));
  if (format === 'jsonl') return { body: ocsf.map((o) => JSON.stringify(o)).join('\n') + '\n', contentType: 'application/x-ndjson' };
  const hec = ocsf.map((o) => JSON.stringify({ time: (o.time as number) / 1000, host: 'agw', source: `agw:${tenantId}`, sourcetype: SIEM_SOURCETYPE, event: o }));
  return { body: hec.join('\n') + '\n', contentType: 'application/json' };
}

export class SiemExport {
  constructor(private readonly d: SiemExportDeps) {}

  /** Whether a tenant's events go anywhere (the consumer acks the others unread). */
  async wants(tenantId: string): Promise<boolean> {
    return (await this.d.tenants.cached(tenantId)).siem !== null;
  }

  /** One result per item (true: acked): each tenant's events in one request. */
  async handleBatch(items: ConsumedItem<DecisionEvent>[]): Promise<boolean[]> {
    const byTenant = new Map<string, number[]>();
    items.forEach((it, i) => byTenant.set(it.event.tenant_id, [...(byTenant.get(it.event.tenant_id) ?? []), i]));
    const results = items.map(() => false);
    await Promise.all(
      [...byTenant].map(async ([tenantId, idx]) => {
        const ok = await this.post(tenantId, idx.map((i) => items[i].event)).catch((e: unknown) => {
          this.d.logger.warn({ err: e, tenantId, events: idx.length }, 'SIEM export failed; the events will be redelivered');
          return false;
        });
        for (const i of idx) results[i] = ok;
      }),
    );
    return results;
  }

  private async post(tenantId: string, events: DecisionEvent[]): Promise<boolean> {
    const t = await this.d.tenants.cached(tenantId);
    if (!t.siem) {
      this.d.events.inc({ outcome: 'skipped' }, events.length);
      return true; // turned off since the event was taken: nothing to send
    }
    const { body, contentType } = siemBody(t.siem.format, tenantId, events);
    const headers: Record<string, string> = { 'content-type': contentType };
    const token = t.siem.sealedToken ? await this.d.siemToken(tenantId, t.siem.sealedToken) : null;
    if (token) headers.authorization = t.siem.format === 'splunk_hec' ? `Splunk ${token}` : `Bearer ${token}`;
    const secret = await this.d.webhookSecret(tenantId, t);
    if (secret) headers[SIGNATURE_HEADER] = signBody(secret, body);
    const r = await this.d.sender.send({ url: t.siem.url, body, headers });
    const delivered = r.outcome === 'success';
    this.d.events.inc({ outcome: delivered ? 'delivered' : r.outcome }, events.length);
    if (!delivered) this.d.logger.warn({ tenantId, events: events.length, outcome: r.outcome, statusCode: r.statusCode, error: r.error }, 'SIEM collector did not take the batch; it will be redelivered');
    return delivered;
  }
}
