/** The record's gRPC form (every field of the message, by its kind, and back to the same record) and its decision event. */
import { audit } from '@agw/proto';
import { actionRecordFields, decisionEventOf, fromAuditEntry, recordFieldsInEvent, toAuditEntry } from './action-record';
import { DecisionEventSchema } from './bus/events';
import { governedRecord } from './record-builders';

const record = governedRecord(
  { action_id: '00000000-0000-4000-8000-000000000001', agent_id: 'a', agent_type: 'assistant', agent_version: '1.0', tool: 't', method: 'm', session_id: null, requested_at: '2026-11-21T23:59:59.123Z' },
  { params: { q: 'é', n: [1, null] }, decision: 'allow', execution_mode: 'agent_direct', violations: ['v'], severity: 'low', bundle_revision: 'rev', details: { stage: 'policy' } },
);
const parse = (json: { text: string } | undefined) => JSON.parse(json?.text || '{}') as Record<string, unknown>;

test('the message carries every field under its own name: objects as Json messages, nulls as empty strings', () => {
  const e = toAuditEntry(record);
  expect(Object.keys(e)).toEqual(Object.keys(audit.AuditEntry.fromPartial({})));
  expect(e).toMatchObject({ params: { text: JSON.stringify(record.params) }, details: { text: '{"stage":"policy"}' }, alert_tier: '', session_id: '', execution_mode: 'agent_direct', requires_human: false, violations: ['v'] });
  expect(toAuditEntry(record, { text: '{"made":"once"}' })).toMatchObject({ params: { text: '{"made":"once"}' }, params_json: '{"made":"once"}' });
  // the previous release's form beside the Json fields, for one release
  expect(e).toMatchObject({ params_json: JSON.stringify(record.params), details_json: '{"stage":"policy"}' });
});

test("the record comes back from a message of the previous release (the objects' text only)", () => {
  const { params: _p, details: _d, ...previous } = toAuditEntry(record);
  const wire = audit.AuditEntry.decode(audit.AuditEntry.encode(audit.AuditEntry.fromPartial(previous)).finish());
  expect(wire.params).toBeUndefined();
  expect(fromAuditEntry(wire, parse)).toEqual(record);
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

test('the decision event carries the fields recordFieldsInEvent marks, and its schema takes exactly those', () => {
  const e = { ...decisionEventOf('ev-1', 'allowed', 't-1', record), record_id: 1, record_hash: 'h' };
  const carried = Object.keys(recordFieldsInEvent).filter((f) => recordFieldsInEvent[f as keyof typeof recordFieldsInEvent] === true);
  expect(Object.keys(e).sort()).toEqual(['event_id', 'kind', 'tenant_id', ...carried, 'record_id', 'record_hash'].sort());
  expect(DecisionEventSchema.parse(e)).toEqual(e);
  expect(Object.keys(DecisionEventSchema.shape).sort()).toEqual([...Object.keys(e), 'details'].sort());
  // kind `policy` carries the details too
  expect(decisionEventOf('ev-2', 'policy', 't-1', record)).toMatchObject({ details: { stage: 'policy' } });
  expect(decisionEventOf('ev-3', 'denied', 't-1', record)).not.toHaveProperty('details');
});
