import Ajv from 'ajv';
import { API_ACTIVITY_CLASS_UID, OCSF_PROFILES, type PresentedRecord, toApiActivity, toJsonLines } from './api-activity';
import { OcsfSchema } from './ocsf-schema';

const schema = new OcsfSchema();
const ajv = new Ajv({ allErrors: true, strict: false });
const validate = ajv.compile(schema.eventSchema('events/application/api_activity.json', [...OCSF_PROFILES]));
const errorsOf = (e: unknown) => (validate(e) ? [] : (validate.errors ?? []).map((x) => `${x.instancePath} ${x.message}`));

const record = (over: Partial<PresentedRecord> = {}): PresentedRecord => ({
  id: 7,
  action_id: '0b8f7f4e-3c55-4d6a-9f77-6c3e8a1d2f10',
  agent_id: 'billing-agent',
  agent_type: 'claude',
  agent_version: '1.2',
  tool: 'transfer_funds',
  method: 'tools/call',
  params: { amount: 50000, currency: 'EUR' },
  decision: 'allow',
  violations: [],
  severity: 'none',
  alert_tier: null,
  requires_human: false,
  execution_mode: 'gateway_brokered',
  source: 'mcp_governed',
  session_id: null,
  bundle_revision: 'financial-v3',
  details: { stage: 'policy' },
  requested_at: '2026-11-29T01:02:03.456Z',
  prev_hash: 'a'.repeat(64),
  record_hash: 'b'.repeat(64),
  leaf_index: 6,
  ...over,
});
const ctx = { tenantId: '8c1d2f0e-1111-4222-8333-944455556666', productVersion: '0.1.0' };

describe('OCSF 1.8.0 schema compiled from the vendored files', () => {
  it('reads the class uid from the category and the class files', () => {
    expect(schema.classUid('events/application/api_activity.json')).toBe(API_ACTIVITY_CLASS_UID);
  });

  it('requires what the schema requires of API Activity (base event, class, objects)', () => {
    const s = schema.eventSchema('events/application/api_activity.json', [...OCSF_PROFILES]) as { required: string[]; properties: Record<string, unknown>; $defs: Record<string, { required?: string[] }> };
    expect(s.required).toEqual(expect.arrayContaining(['activity_id', 'category_uid', 'class_uid', 'metadata', 'severity_id', 'time', 'type_uid', 'actor', 'api', 'src_endpoint']));
    expect(s.$defs.metadata.required).toEqual(expect.arrayContaining(['product', 'version']));
    expect(s.$defs.api.required).toEqual(['operation']);
    // the Security Control profile's attributes exist only when the event declares the profile
    expect(s.properties.disposition_id).toBeDefined();
    const bare = schema.eventSchema('events/application/api_activity.json') as { properties: Record<string, unknown> };
    expect(bare.properties.disposition_id).toBeUndefined();
  });
});

describe('audit records as API Activity events', () => {
  it.each([
    ['allow', {}, { action_id: 1, disposition_id: 1, status_id: 1 }],
    ['deny', { decision: 'deny', violations: ['amount_over_limit'], severity: 'high', alert_tier: 'P1' }, { action_id: 2, disposition_id: 2, status_id: 2 }],
    ['escalate', { decision: 'requires_human', requires_human: true, severity: 'medium', alert_tier: 'escalate' }, { action_id: 99, disposition_id: 14, status_id: 99 }],
    ['observed managed call', { decision: 'observed', source: 'mcp_observed', session_id: 'c1f0e1de-0000-4000-8000-000000000001', execution_mode: null }, { action_id: 99, disposition_id: 17, status_id: 1 }],
    ['resource read', { method: 'resources/read', tool: 'docs' }, { activity_id: 2, type_uid: 600302 }],
  ])('%s validates against the schema', (_name, over, expected) => {
    const e = toApiActivity(record(over as Partial<PresentedRecord>), ctx);
    expect(errorsOf(e)).toEqual([]);
    expect(e).toMatchObject(expected);
  });

  it('keeps the chain fields, so an event leads back to its record', () => {
    const e = toApiActivity(record(), ctx) as { unmapped: Record<string, unknown>; metadata: Record<string, unknown>; time: number };
    expect(e.unmapped).toMatchObject({ record_id: 7, record_hash: 'b'.repeat(64), prev_hash: 'a'.repeat(64), leaf_index: 6 });
    expect(e.metadata).toMatchObject({ uid: `${ctx.tenantId}:7`, correlation_uid: record().action_id, tenant_uid: ctx.tenantId, version: '1.8.0' });
    expect(e.time).toBe(Date.parse('2026-11-29T01:02:03.456Z'));
  });

  it('the validator is strict: a missing required attribute, an unknown one or a wrong enum value fails', () => {
    const good = toApiActivity(record(), ctx);
    const { api: _api, ...noApi } = good;
    expect(errorsOf(noApi).join('\n')).toMatch(/must have required property 'api'/);
    expect(errorsOf({ ...good, decision: 'allow' }).join('\n')).toMatch(/must NOT have additional properties/);
    expect(errorsOf({ ...good, severity_id: 7 }).join('\n')).toMatch(/severity_id must be equal to one of the allowed values/);
    expect(errorsOf({ ...good, actor: {} }).join('\n')).toMatch(/actor must have required property/);
  });

  it('writes JSON Lines', () => {
    const lines = toJsonLines([toApiActivity(record(), ctx), toApiActivity(record({ id: 8 }), ctx)]);
    expect(lines.endsWith('\n')).toBe(true);
    expect(lines.trim().split('\n').map((l) => JSON.parse(l).metadata.sequence)).toEqual([7, 8]);
    expect(toJsonLines([])).toBe('');
  });
});
