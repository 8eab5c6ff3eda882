/**
 * Audit records for the SIEM: the compliance export's `format=ocsf` through the public API, every event
 * checked against the OCSF 1.8.0 schema compiled from the vendored schema files (packages/ocsf), one event
 * per record of the range, in chain order, each naming its record's hash; another tenant's export is a 404.
 */
import { OCSF_PROFILES, OcsfSchema } from '@agw/ocsf';
import Ajv from 'ajv';
import { type Tenant, api, call, newTenant } from './support/api';

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

    const validate = new Ajv({ allErrors: true, strict: false }).compile(new OcsfSchema().eventSchema('events/application/api_activity.json', [...OCSF_PROFILES]));
    for (const e of events) expect([validate(e), validate.errors]).toEqual([true, null]);
    expect(events.map((e) => [e.metadata.sequence, e.unmapped.record_hash, e.metadata.correlation_uid])).toEqual(records.map((r) => [r.id, r.record_hash, r.action_id]));
    expect(events.every((e) => e.class_uid === 6003 && e.metadata.tenant_uid === t.tenantId)).toBe(true);
  });

  it('refuses another tenant and a bad format by name', async () => {
    const other = await newTenant('OCSF other');
    expect((await api('GET', `/compliance/export/${t.tenantId}?format=ocsf`, { key: other.apiKey })).status).toBe(404);
    const bad = await api('GET', `/compliance/export/${t.tenantId}?format=cef`, { key: t.apiKey });
    expect(bad.status).toBe(422);
    expect(JSON.stringify(bad.body)).toContain("format must be 'json', 'pdf' or 'ocsf'");
  });
});
