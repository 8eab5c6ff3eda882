/** A record request read back as its AppendRequest, including one the previous release published (a rolling update). */
import { audit } from '@agw/proto';
import { fromAuditEntry, toAuditEntry } from '../action-record';
import { objectFromJson } from '../json-text';
import { governedRecord } from '../record-builders';
import { appendRequestOf } from './record-requests';

const subject = 'T.audit.records.t-1';
const record = governedRecord(
  { action_id: '00000000-0000-4000-8000-000000000001', agent_id: 'a', agent_type: 'assistant', agent_version: '1.0', tool: 't', method: 'm', session_id: null, requested_at: '2026-11-21T23:59:59.123Z' },
  { params: { q: 1 }, decision: 'allow', execution_mode: 'agent_direct', violations: [], severity: 'low', bundle_revision: 'rev', details: { event: 'tool.quarantined' } },
);
const recordOf = (req: audit.AppendRequest | string) => fromAuditEntry((req as audit.AppendRequest).entry!, objectFromJson);

test('a request is its AppendRequest in proto JSON, the entry whole', () => {
  const req = audit.AppendRequest.fromPartial({ tenant_id: 't-1', entry: toAuditEntry(record), append_key: 'k-1' });
  expect(appendRequestOf(subject, { event_id: 'k-1', request: audit.AppendRequest.toJSON(req) as Record<string, unknown> })).toEqual(req);
  expect(recordOf(req)).toEqual(record);
});

test("a request the previous release queued (its entry's paramsJson / detailsJson text only) reads as the same record", () => {
  const { params: _p, details: _d, ...previous } = audit.AuditEntry.toJSON(toAuditEntry(record)) as Record<string, unknown>;
  expect(previous).toMatchObject({ paramsJson: '{"q":1}', detailsJson: '{"event":"tool.quarantined"}' });
  const req = appendRequestOf(subject, { event_id: 'k-1', request: { tenantId: 't-1', appendKey: 'k-1', entry: previous } });
  expect(recordOf(req)).toEqual(record);
});
