/** The record's gRPC form: every field of the message, by its kind, and back to the same record. */
import { audit } from '@agw/proto';
import { actionRecordFields, fromAuditEntry, toAuditEntry } from './action-record';
import { governedRecord } from './record-builders';

const record = governedRecord(
  { action_id: '00000000-0000-4000-8000-000000000001', agent_id: 'a', agent_type: 'assistant', agent_version: '1.0', tool: 't', method: 'm', session_id: null, requested_at: '2026-11-21T23:59:59.123Z' },
  { params: { q: 'é', n: [1, null] }, decision: 'allow', execution_mode: 'agent_direct', violations: ['v'], severity: 'low', bundle_revision: 'rev', details: { stage: 'policy' } },
);
const parse = (text: string) => JSON.parse(text || '{}') as Record<string, unknown>;

test('the message carries every field under its own name: objects as JSON text, nulls as empty strings', () => {
  const e = toAuditEntry(record);
  expect(Object.keys(e)).toEqual(Object.keys(audit.AuditEntry.fromPartial({})));
  expect(e).toMatchObject({ params_json: JSON.stringify(record.params), details_json: '{"stage":"policy"}', alert_tier: '', session_id: '', execution_mode: 'agent_direct', requires_human: false, violations: ['v'] });
  expect(toAuditEntry(record, '{"made":"once"}').params_json).toBe('{"made":"once"}');
});

test('the record comes back from its message as it was, through the wire bytes too', () => {
  const wire = audit.AuditEntry.decode(audit.AuditEntry.encode(toAuditEntry(record)).finish());
  const back = fromAuditEntry(wire, parse);
  expect(back).toEqual(record);
  expect(Object.keys(back)).toEqual([...actionRecordFields]);
});

test('an empty time is read as now, and a time is normalised to UTC with milliseconds', () => {
  const at = fromAuditEntry({ ...toAuditEntry(record), requested_at: '2026-11-22T01:59:59+02:00' }, parse).requested_at;
  expect(at).toBe('2026-11-21T23:59:59.000Z');
  expect(Number.isNaN(Date.parse(fromAuditEntry({ ...toAuditEntry(record), requested_at: '' }, parse).requested_at))).toBe(false);
});
