/**
 * NATS adapter of the SIEM export: the durable JetStream consumer `siem` on the whole DECISIONS stream
 * (`decisions.>` and `nohook.decisions.>`: a tenant without a webhook URL may still stream to its SIEM),
 * in batches (SIEM_BATCH_MAX events, or SIEM_LINGER_MS after the first). Events of tenants without
 * `siem_export` are acked unread. Replicas share the durable; a restarted replica resumes at the first
 * unacked event, and a collector that is down gets the events again with a growing delay.
 */
import { type Bus, DecisionEventSchema, type Logger, type RunningConsumer, consumeDurableBatches, decisionSubjectRoots, streams } from '@agw/shared';
import type { SiemExport } from '../siem/siem-export';

export const SIEM_DURABLE_NAME = 'siem';

/** The tenant of a decision subject under either root (`[<prefix>.][nohook.]decisions.<tenant>.<kind>[.session]`), or null. */
export function tenantOfAnyDecisionSubject(prefix: string, subject: string): string | null {
  for (const root of decisionSubjectRoots(prefix)) {
    if (!subject.startsWith(root)) continue;
    const tenant = subject.slice(root.length).split('.')[0];
    return tenant || null;
  }
  return null;
}

export function consumeSiemExport(bus: Bus, siem: Pick<SiemExport, 'handleBatch' | 'wants'>, logger: Logger, o: { maxBatch: number; lingerMs: number; maxRetryDelayMs: number }): Promise<RunningConsumer> {
  return consumeDurableBatches(bus, {
    stream: streams(bus.prefix).decisions.name,
    durable: SIEM_DURABLE_NAME,
    schema: DecisionEventSchema,
    skip: async (subject) => {
      const tenant = tenantOfAnyDecisionSubject(bus.prefix, subject);
      return tenant !== null && !(await siem.wants(tenant));
    },
    handleBatch: (items) => siem.handleBatch(items),
    logger,
    maxBatch: o.maxBatch,
    lingerMs: o.lingerMs,
    retryDelayMs: 1000,
    maxRetryDelayMs: o.maxRetryDelayMs,
    ackWaitMs: 60_000,
  });
}
