/**
 * A durable JetStream pull consumer that hands its handler batches instead of single events, for readers
 * whose unit of work is a batch (the SIEM export posts one request per tenant per batch). A batch is handed
 * over when it holds `maxBatch` events or `lingerMs` after its first event arrived, whichever is first; one
 * batch at a time. The handler answers per event: true acks it, false naks it (redelivered after a delay
 * that grows with its deliveries, up to `maxRetryDelayMs`); a thrown handler naks the whole batch. At least
 * once, as every consumer of the fleet: handlers must tolerate a redelivered event.
 */
import type { JsMsg } from 'nats';
import type { z } from 'zod';
import type { Logger } from '../logger';
import { type Bus, type RunningConsumer, durableConsumer, readEvent } from './bus';

export interface ConsumedItem<T> {
  event: T;
  subject: string;
  /** how many times JetStream has handed this event out (1 on the first delivery) */
  deliveries: number;
}

export interface BatchConsumerOptions<T> {
  stream: string;
  durable: string;
  /** undefined: every subject of the stream */
  filterSubject?: string;
  schema: z.ZodType<T>;
  /** one result per item, in order: true acks, false naks; a throw naks them all */
  handleBatch: (items: ConsumedItem<T>[]) => Promise<boolean[]>;
  /** true acks the message unread (nothing to do for this subject); a failure counts as false */
  skip?: (subject: string) => boolean | Promise<boolean>;
  logger: Logger;
  maxBatch?: number;
  lingerMs?: number;
  /** the nak delay of a first failure, doubled per delivery up to maxRetryDelayMs */
  retryDelayMs?: number;
  maxRetryDelayMs?: number;
  ackWaitMs?: number;
}

export async function consumeDurableBatches<T>(bus: Bus, o: BatchConsumerOptions<T>): Promise<RunningConsumer> {
  const maxBatch = o.maxBatch ?? 500;
  const lingerMs = o.lingerMs ?? 1000;
  const consumer = await durableConsumer(bus, { ...o, maxAckPending: maxBatch * 4 });
  const messages = await consumer.consume({ max_messages: maxBatch * 2 });
  const delayOf = (deliveries: number) => Math.min((o.retryDelayMs ?? 1000) * 2 ** Math.max(0, deliveries - 1), o.maxRetryDelayMs ?? 60_000);

  let pending: Array<{ m: JsMsg; item: ConsumedItem<T> }> = [];
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();

  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    const batch = pending;
    pending = [];
    if (!batch.length) return running;
    running = running.then(async () => {
      let results: boolean[];
      try {
        results = await o.handleBatch(batch.map((b) => b.item));
      } catch (e) {
        o.logger.warn({ err: e, events: batch.length }, 'batch handler failed; the batch will be redelivered');
        results = batch.map(() => false);
      }
      batch.forEach(({ m, item }, i) => (results[i] ? m.ack() : m.nak(delayOf(item.deliveries))));
    });
    return running;
  };

  const loop = (async () => {
    for await (const m of messages) {
      const read = await readEvent(m, o);
      if (read === 'skip') m.ack();
      if (typeof read !== 'object') continue;
      pending.push({ m, item: { event: read.event, subject: m.subject, deliveries: m.info.redeliveryCount } });
      if (pending.length >= maxBatch) await flush();
      else if (!timer) timer = setTimeout(() => void flush(), lingerMs);
    }
  })();

  return {
    stop: async () => {
      await messages.close().catch(() => undefined);
      await loop.catch(() => undefined);
      await flush().catch(() => undefined);
    },
  };
}
