/**
 * Records that a service other than the gateway asks the audit service to append, sent over the AUDIT stream
 * instead of a gRPC call, so that the audit service, which calls the vault (its note signer), is never called
 * back by it: the vault's control_plane records (a quarantined federated tool, an upstream OAuth connection
 * connected, lost or ended) go out as `audit.records.<tenant_id>` and the audit service's durable consumer
 * `audit-record-requests` appends each one (docs/architecture.md, "Who calls whom").
 *
 * The message is the contract's own `AppendRequest` (proto JSON), with a required `append_key`: the JetStream
 * message id (a publish sent again is dropped by the stream) and the append's idempotency key (a message
 * delivered again is answered with the record it already made). A request waits in the stream while the
 * audit service or its Postgres is away: nothing is lost with them.
 */
import { audit } from '@agw/proto';
import { z } from 'zod';
import type { CallOptions } from '../grpc';
import { withRetry } from '../grpc-retry';
import { type Bus, publishEvent } from './bus';

/** The subject of a record request of `tenantId` (on the AUDIT stream, `audit.>`). */
export const recordRequestSubject = (prefix: string, tenantId: string) => `${prefix ? `${prefix}.` : ''}audit.records.${tenantId}`;

/** What the audit service's consumer reads: every tenant's record requests. */
export const recordRequestsFilter = (prefix: string) => `${prefix ? `${prefix}.` : ''}audit.records.>`;

export const RecordRequestEventSchema = z.object({
  /** the request's append_key (the JetStream message id) */
  event_id: z.string().min(1),
  /** audit.AppendRequest in proto JSON */
  request: z.record(z.string(), z.unknown()),
});
export type RecordRequestEvent = z.infer<typeof RecordRequestEventSchema>;

/** The AppendRequest of a record request, or why it is not one (its tenant is not its subject's, it has no key). */
export function appendRequestOf(subject: string, e: RecordRequestEvent): audit.AppendRequest | string {
  const req = audit.AppendRequest.fromJSON(e.request);
  if (!req.append_key || req.append_key !== e.event_id) return 'a record request needs its append_key, equal to its event_id';
  if (!req.entry) return 'a record request needs an entry';
  if (!subject.endsWith(`.records.${req.tenant_id}`)) return `a record request of tenant ${req.tenant_id} on ${subject}`;
  return req;
}

/**
 * An appender with the audit client's `append` shape that publishes the request on the AUDIT stream instead;
 * the call resolves when the stream has stored it (the append itself follows within moments). A retry
 * policy in `options` sends the publish again under the same message id.
 */
export function streamedRecordAppender(bus: Pick<Bus, 'js' | 'prefix'>): { append(req: audit.AppendRequest, options?: CallOptions): Promise<void> } {
  return {
    async append(req, options) {
      if (!req.append_key) throw new Error('a streamed record request needs an append_key');
      const event: RecordRequestEvent = { event_id: req.append_key, request: audit.AppendRequest.toJSON(req) as Record<string, unknown> };
      const publish = () => publishEvent(bus as Bus, recordRequestSubject(bus.prefix, req.tenant_id), event);
      await (options?.retry ? withRetry(publish, options.retry) : publish());
    },
  };
}
