/**
 * NATS JetStream helpers: connect, make sure the fleet's streams exist, publish with deduplication,
 * and consume through durable pull consumers (at-least-once; handlers must be idempotent).
 */
import {
  AckPolicy,
  DeliverPolicy,
  type JetStreamClient,
  type JsMsg,
  type NatsConnection,
  RetentionPolicy,
  connect,
  headers as natsHeaders,
} from 'nats';
import type { z } from 'zod';
import type { Logger } from '../logger';
import { countNatsConnection } from '../store-requests';
import { traceHooks } from '../tracing/hooks';
import { type StreamDef, streams } from './events';

export interface Bus {
  nc: NatsConnection;
  js: JetStreamClient;
  prefix: string;
  close(): Promise<void>;
}

export async function connectBus(url: string, prefix: string, name: string): Promise<Bus> {
  // noAsyncTraces: no `new Error()` per request / JetStream publish to keep the caller's stack for a timeout
  // (a third of the publish cost in the audit service's profile); errors keep their code and message
  const nc = await connect({ servers: url, name, maxReconnectAttempts: -1, reconnectTimeWait: 500, noAsyncTraces: true });
  countNatsConnection(nc);
  const jsm = await nc.jetstreamManager();
  for (const def of Object.values(streams(prefix))) await ensureStream(jsm, def);
  return {
    nc,
    js: nc.jetstream(),
    prefix,
    close: async () => {
      await nc.drain().catch(() => undefined);
    },
  };
}

/**
 * Create the stream, or give an existing one the subjects this version adds (a stream made by an older
 * version keeps its messages and consumers; `nohook.decisions.>` was added to DECISIONS in this way).
 */
export async function ensureStream(jsm: Awaited<ReturnType<NatsConnection['jetstreamManager']>>, def: StreamDef): Promise<void> {
  let existing: string[];
  try {
    existing = (await jsm.streams.info(def.name)).config.subjects ?? [];
  } catch {
    try {
      await jsm.streams.add({ name: def.name, subjects: def.subjects, retention: RetentionPolicy.Limits, max_age: 7 * 24 * 3600 * 1e9, duplicate_window: 120 * 1e9 });
    } catch (e) {
      // created concurrently by another service
      await jsm.streams.info(def.name).catch(() => {
        throw e;
      });
    }
    return;
  }
  const missing = def.subjects.filter((s) => !existing.includes(s));
  if (missing.length) await jsm.streams.update(def.name, { subjects: [...existing, ...missing] });
}

const enc = new TextEncoder();
const dec = new TextDecoder();

/** Publish one event; `msgId` deduplicates retries inside the stream's duplicate window. */
export async function publishEvent(bus: Bus, subject: string, event: { event_id: string }): Promise<void> {
  const trace = traceHooks.current?.publish(subject, event.event_id, true);
  if (!trace) {
    await bus.js.publish(subject, enc.encode(JSON.stringify(event)), { msgID: event.event_id });
    return;
  }
  // traced: the trace context travels in the message headers (W3C traceparent)
  const h = natsHeaders();
  for (const [k, v] of Object.entries(trace.headers)) h.set(k, v);
  try {
    await bus.js.publish(subject, enc.encode(JSON.stringify(event)), { msgID: event.event_id, headers: h });
    trace.end();
  } catch (e) {
    trace.end(e);
    throw e;
  }
}

export interface DurableConsumerOptions<T> {
  stream: string;
  durable: string;
  filterSubject: string;
  schema: z.ZodType<T>;
  /** resolve to ack; throw to nak (redelivered after `retryDelayMs`) */
  handle: (event: T, msg: JsMsg) => Promise<void>;
  /**
   * Asked first, by subject: true acks the message unread (neither decoded nor schema-parsed), for events
   * this consumer has nothing to do for (the webhook service and tenants without a webhook). A failure
   * counts as false: the message is handled as usual.
   */
  skip?: (subject: string) => boolean | Promise<boolean>;
  logger: Logger;
  retryDelayMs?: number;
  /** ack_wait: how long a message may be in a handler before it is redelivered */
  ackWaitMs?: number;
  maxAckPending?: number;
}

export interface RunningConsumer {
  stop(): Promise<void>;
}

/**
 * The durable pull consumer `durable` of `stream`, made when it does not exist yet (explicit acks, from the
 * stream's first message; several replicas racing to make it end with the one that won), ready to consume.
 */
export async function durableConsumer(bus: Bus, o: { stream: string; durable: string; filterSubject?: string; ackWaitMs?: number; maxAckPending: number }) {
  const jsm = await bus.nc.jetstreamManager();
  const config = {
    durable_name: o.durable,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ...(o.filterSubject ? { filter_subject: o.filterSubject } : {}),
    ack_wait: (o.ackWaitMs ?? 60_000) * 1e6,
    max_ack_pending: o.maxAckPending,
  };
  try {
    await jsm.consumers.info(o.stream, o.durable);
  } catch {
    await jsm.consumers.add(o.stream, config).catch(async (e) => {
      await jsm.consumers.info(o.stream, o.durable).catch(() => {
        throw e;
      });
    });
  }
  return bus.js.consumers.get(o.stream, o.durable);
}

/**
 * One message of a durable consumer read the one way: `skip` (the consumer's `skip` says so by subject: ack
 * it unread), `malformed` (not JSON or not the schema: logged and terminated, never redelivered), or the event.
 */
export async function readEvent<T>(
  m: JsMsg,
  o: { schema: z.ZodType<T>; skip?: (subject: string) => boolean | Promise<boolean>; logger: Logger },
): Promise<{ event: T } | 'skip' | 'malformed'> {
  if (o.skip && (await Promise.resolve(o.skip(m.subject)).catch(() => false))) return 'skip';
  try {
    return { event: o.schema.parse(JSON.parse(dec.decode(m.data))) };
  } catch (e) {
    o.logger.error({ err: e, subject: m.subject, seq: m.seq }, 'dropping malformed event');
    m.term();
    return 'malformed';
  }
}

/** Attach a durable pull consumer; several replicas with the same durable share the work. */
export async function consumeDurable<T>(bus: Bus, o: DurableConsumerOptions<T>): Promise<RunningConsumer> {
  const consumer = await durableConsumer(bus, { ...o, maxAckPending: o.maxAckPending ?? 256 });
  const messages = await consumer.consume({ max_messages: 64 });
  const acks = new AckCoalescer();
  let inFlight: Promise<void> = Promise.resolve();
  const loop = (async () => {
    for await (const m of messages) {
      const work = (async () => {
        const read = await readEvent(m, o);
        if (read === 'skip') return acks.ack(m);
        if (read === 'malformed') return;
        const event = read.event;
        try {
          const tracing = traceHooks.current;
          if (tracing) await tracing.consume(m.subject, m.headers, (event as { event_id?: string }).event_id, () => o.handle(event, m));
          else await o.handle(event, m);
          acks.ack(m);
        } catch (e) {
          o.logger.warn({ err: e, subject: m.subject, seq: m.seq }, 'event handler failed; will be redelivered');
          m.nak(o.retryDelayMs ?? 1000);
        }
      })();
      inFlight = work;
      await work;
    }
  })();
  return {
    stop: async () => {
      await messages.close().catch(() => undefined);
      await inFlight.catch(() => undefined);
      await loop.catch(() => undefined);
      acks.flush();
    },
  };
}

/**
 * Acks of the messages handled in one turn of the event loop, sent together (one socket write instead of one
 * per message): nats.js flushes what was queued in the same microtask run, and messages handled one after the
 * other each get their own. An ack is held until setImmediate, well inside ack_wait; a process that dies in
 * between gets those messages redelivered, which at-least-once handlers already expect.
 */
class AckCoalescer {
  private pending: JsMsg[] = [];

  ack(m: JsMsg): void {
    if (this.pending.push(m) === 1) setImmediate(() => this.flush());
  }

  flush(): void {
    const batch = this.pending;
    this.pending = [];
    for (const m of batch) m.ack();
  }
}
