/**
 * Audit records for the SIEM, through the public API and the running fleet:
 * - the compliance export's `format=ocsf`: one event per record of the range, in chain order, each naming
 *   its record's hash; another tenant's export is a 404;
 * - the streaming export (`siem_export` setting): a JSON-lines collector over HTTPS receives every decision
 *   of the tenant as an OCSF event, signed like the webhooks; the collector's token is sealed (never in the
 *   settings answer or the tables in clear) and sent as `Authorization: Bearer`.
 * Every event is checked against the OCSF 1.8.0 schema compiled from the vendored schema files (packages/ocsf).
 */
import { createHmac } from 'node:crypto';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { OCSF_PROFILES, OcsfSchema } from '@agw/ocsf';
import Ajv from 'ajv';
import { type Tenant, api, call, eventually, newTenant, toolCall } from './support/api';
import { tablesContaining } from './support/stores';
import { trustedReceiverCert } from './support/webhook-receiver-cert';

const validate = new Ajv({ allErrors: true, strict: false }).compile(new OcsfSchema().eventSchema('events/application/api_activity.json', [...OCSF_PROFILES]));

describe('OCSF export of the audit records', () => {
  let t: Tenant;
  beforeAll(async () => {
    t = await newTenant('OCSF export');
  });

  it('gives one schema-valid API Activity event per record, in chain order, as JSON Lines', async () => {
    for (let i = 0; i < 3; i++) await call(t.apiKey, { params: { q: `ocsf ${i}` } });
    const log = await api('GET', '/audit/log?limit=100', { key: t.apiKey });
    expect(log.status).toBe(200);
    const records = [...log.body.records].reverse() as Array<{ id: number; record_hash: string; decision: string; action_id: string }>;
    expect(records.length).toBeGreaterThanOrEqual(3);

    const out = await api('GET', `/compliance/export/${t.tenantId}?format=ocsf`, { key: t.apiKey });
    expect(out.status).toBe(200);
    expect(out.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    expect(out.headers.get('content-disposition')).toMatch(/^attachment; filename="compliance-export-.*\.ocsf\.jsonl"$/);
    const text = typeof out.body === 'string' ? out.body : `${JSON.stringify(out.body)}\n`;
    const events = text.trim().split('\n').map((l: string) => JSON.parse(l));
    expect(events).toHaveLength(records.length);

    for (const e of events) expect([validate(e), validate.errors]).toEqual([true, null]);
    expect(events.map((e) => [e.metadata.sequence, e.unmapped.record_hash, e.metadata.correlation_uid])).toEqual(records.map((r) => [r.id, r.record_hash, r.action_id]));
    expect(events.every((e) => e.class_uid === 6003 && e.metadata.tenant_uid === t.tenantId)).toBe(true);
  });

  it('refuses another tenant and a bad format by name', async () => {
    const other = await newTenant('OCSF other');
    expect((await api('GET', `/compliance/export/${t.tenantId}?format=ocsf`, { key: other.apiKey })).status).toBe(404);
    const bad = await api('GET', `/compliance/export/${t.tenantId}?format=cef`, { key: t.apiKey });
    expect(bad.status).toBe(422);
    expect(JSON.stringify(bad.body)).toContain("format must be 'json', 'pdf', 'ocsf' or 'opa'");
  });

  it('gives the policy decisions as OPA decision-log events, one JSON object per line, with the replay input and the bundle revision', async () => {
    const o = await newTenant('OPA decision log');
    for (let i = 0; i < 2; i++) await call(o.apiKey, { params: { q: `opa ${i}` } });
    const log = await api('GET', '/audit/log?limit=100', { key: o.apiKey });
    const sent = toolCall();
    const records = ([...log.body.records].reverse() as Array<{ action_id: string; decision: string; bundle_revision: string; tool: string; method: string; agent_id: string }>).filter((r) => r.tool === sent.tool && r.method === sent.method);
    expect(records).toHaveLength(2);
    const status = await api('GET', '/bundles/gateway/status', { key: o.apiKey });
    expect(status.status).toBe(200);

    const out = await api('GET', `/compliance/export/${o.tenantId}?format=opa`, { key: o.apiKey });
    expect(out.status).toBe(200);
    expect(out.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    expect(out.headers.get('content-disposition')).toMatch(/^attachment; filename="compliance-export-.*\.opa-decisions\.jsonl"$/);
    const text = typeof out.body === 'string' ? out.body : `${JSON.stringify(out.body)}\n`;
    const events = text.trim().split('\n').map((l: string) => JSON.parse(l));
    expect(events.map((e) => e.decision_id)).toEqual(records.map((r) => r.action_id));
    records.forEach((r, i) => {
      expect(events[i]).toEqual({
        decision_id: r.action_id,
        path: `agw/${status.body.policy_template}/decision`,
        input: expect.objectContaining({ agent_id: r.agent_id, tool: r.tool, method: r.method, params: { q: `opa ${i}` }, pii_detected: false }),
        result: expect.objectContaining({ decision: r.decision, violations: expect.any(Array), severity: expect.any(String) }),
        timestamp: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
        bundles: { gateway: { revision: r.bundle_revision } },
        labels: { app: 'agw', id: o.tenantId, version: expect.any(String) },
      });
      expect(r.bundle_revision).toBe(status.body.revision);
    });
    expect((await api('GET', `/compliance/export/${o.tenantId}?format=opa`, { key: t.apiKey })).status).toBe(404);
  });

  it('streams every decision to the tenant collector as OCSF events, signed, with the sealed token', async () => {
    const cert = trustedReceiverCert();
    const got: Array<{ headers: Record<string, string | string[] | undefined>; raw: Buffer }> = [];
    const server = https.createServer({ cert: cert.cert, key: cert.key }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        got.push({ headers: req.headers, raw: Buffer.concat(chunks) });
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/collector`;
      const s = await newTenant('SIEM stream');
      const token = `siem-token-${Math.random().toString(36).slice(2)}`;
      // a webhook secret to sign with (no webhook URL: the decisions go under nohook., and still reach the SIEM)
      const set = await api('PATCH', '/dashboard/settings', { key: s.apiKey, body: { webhook_secret: 'whsec_siem_e2e_signing_secret', siem_export: { url, format: 'jsonl', token } } });
      expect(set.status).toBe(200);
      expect(set.body.siem_export).toEqual({ url, format: 'jsonl', token_set: true });
      expect(JSON.stringify(set.body)).not.toContain(token);
      const bad = await api('PATCH', '/dashboard/settings', { key: s.apiKey, body: { siem_export: { url: 'http://collector.example/x', format: 'jsonl' } } });
      expect(bad.status).toBe(422);
      expect(JSON.stringify(bad.body)).toContain('siem_export.url must be an absolute HTTPS URL');

      for (let i = 0; i < 4; i++) await call(s.apiKey, { params: { q: `siem ${i}` } });
      const log = await api('GET', '/audit/log?limit=100', { key: s.apiKey });
      const decisions = (log.body.records as Array<{ id: number; source: string }>).filter((r) => r.source !== 'control_plane');
      expect(decisions.length).toBeGreaterThanOrEqual(4);
      const events = await eventually(async () => {
        const all = got.flatMap((g) => g.raw.toString('utf8').trim().split('\n')).map((l) => JSON.parse(l));
        return new Set(all.map((e) => e.metadata.sequence)).size >= decisions.length ? all : undefined;
      }, 20_000);
      for (const e of events) expect([validate(e), validate.errors]).toEqual([true, null]);
      expect(new Set(events.map((e) => e.metadata.sequence))).toEqual(new Set(decisions.map((r) => r.id)));
      for (const g of got) {
        expect(g.headers.authorization).toBe(`Bearer ${token}`);
        expect(g.headers['content-type']).toBe('application/x-ndjson');
        expect(g.headers['x-service-signature']).toBe(`sha256=${createHmac('sha256', 'whsec_siem_e2e_signing_secret').update(g.raw).digest('hex')}`);
      }
      expect(tablesContaining(token)).toEqual([]);

      const off = await api('PATCH', '/dashboard/settings', { key: s.apiKey, body: { siem_export: null } });
      expect(off.body.siem_export).toBeNull();
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
