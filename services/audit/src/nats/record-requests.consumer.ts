/**
 * The durable consumer `audit-record-requests` of the AUDIT stream (`audit.records.>`): records that other
 * services ask to be appended without calling this one (the vault's control_plane records: a quarantined
 * federated tool, an upstream OAuth connection's lifecycle; packages/shared/src/bus/record-requests.ts).
 * Each request is appended under its `append_key`, so a message delivered again is answered with the record
 * it already made: one record per request. A request this service can never append (not the contract, a
 * tenant other than its subject's, an invalid entry) is logged and dropped, never redelivered; any other
 * failure (Postgres away) is redelivered until it is appended.
 */
import { type Bus, type Logger, RecordRequestEventSchema, type RunningConsumer, appendRequestOf, consumeDurable, recordRequestsFilter, streams } from '@agw/shared';
import type { AuditChain } from '../chain/audit-chain';
import { toEntry } from '../chain/entry-message';

export function consumeRecordRequests(bus: Bus, chain: Pick<AuditChain, 'append'>, logger: Logger): Promise<RunningConsumer> {
  return consumeDurable(bus, {
    stream: streams(bus.prefix).audit.name,
    durable: 'audit-record-requests',
    filterSubject: recordRequestsFilter(bus.prefix),
    schema: RecordRequestEventSchema,
    logger,
    handle: async (e, m) => {
      const req = appendRequestOf(m.subject, e);
      if (typeof req === 'string') {
        logger.error({ subject: m.subject, event_id: e.event_id, why: req }, 'dropping a record request that can never be appended');
        return;
      }
      try {
        const r = await chain.append(req.tenant_id, toEntry(req.entry), { eventKind: req.event_kind || undefined, webhook: req.tenant_has_webhook ?? true, appendKey: req.append_key });
        logger.debug({ tenant_id: req.tenant_id, tenant_seq: r.tenant_seq, append_key: req.append_key }, 'record request appended');
      } catch (err) {
        if ((err as { code?: string }).code === 'invalid_input') {
          logger.error({ subject: m.subject, event_id: e.event_id, err: (err as Error).message }, 'dropping a record request whose entry is not a record');
          return;
        }
        throw err;
      }
    },
  });
}
