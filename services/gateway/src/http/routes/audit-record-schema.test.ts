/** The API's record is the record message's: its fields under the same names (Json fields as objects), the tenant's id and the hashes. */
import { audit } from '@agw/proto';
import { actionRecordFields } from '@agw/shared';
import { auditRecordSchema } from './audit.routes';

test('the OpenAPI record lists every field of agw.audit.v1.AuditEntry, and only those with the id and the hashes', () => {
  // but the previous release's form of the objects (params_json, details_json), in the message for one release
  const messageFields = Object.keys(audit.AuditEntry.fromPartial({})).filter((k) => !k.endsWith('_json'));
  expect([...actionRecordFields]).toEqual(messageFields);
  expect(Object.keys(auditRecordSchema.shape).sort()).toEqual(['id', ...messageFields, 'prev_hash', 'record_hash'].sort());
});
