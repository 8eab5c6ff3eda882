/**
 * JetStream publishes of many events at once (the audit service's committed batches). Each event is a core
 * NATS publish carrying the Nats-Msg-Id header (the stream deduplicates by it, exactly as publishEvent's
 * msgID) and a reply subject under one inbox subscription this publisher keeps; the stream's acks come back
 * there. Per event there is no request object, no timer and no promise chain of nats.js' request path
 * (half the publishing process's CPU per event, docs/history/performance-2026.md); one timer per batch.
 * An event counts as published only on a positive ack of the stream (a PubAck naming a stream, duplicate or
 * not). No ack within the timeout, an error ack, or a 503 (no stream for the subject) is a failure, which
 * the caller leaves in its outbox. A late ack of a timed-out event is ignored (the outbox still has it).
 */
import { type Msg, type NatsConnection, type Subscription, createInbox, headers } from 'nats';
import { traceHooks } from '../tracing/hooks';

const enc = new TextEncoder();
const dec = new TextDecoder();

export interface BatchItem {
  subject: string;
  event: { event_id: string };
}

/** null for a positive JetStream ack, else why not. */
export function jetStreamAckError(m: Msg): Error | null {
  if (m.headers?.hasError) return new Error(`JetStream publish failed: ${m.headers.code} ${m.headers.description}`);
  try {
    const pa = JSON.parse(dec.decode(m.data)) as { stream?: unknown; error?: { description?: string; code?: number } };
    if (pa.error) return new Error(`JetStream publish failed: ${pa.error.code ?? ''} ${pa.error.description ?? ''}`.trim());
    if (typeof pa.stream === 'string' && pa.stream) return null;
  } catch {
    /* not a PubAck */
  }
  return new Error('JetStream publish failed: invalid ack');
}

export class BatchPublisher {
  private readonly inbox = createInbox();
  private sub: Subscription | null = null;
  private readonly waiting = new Map<string, (err: Error | null) => void>();
  private seq = 0;

  constructor(
    private readonly nc: NatsConnection,
    private readonly timeoutMs = 5000,
  ) {}

  private subscribe(): void {
    if (this.sub && !this.sub.isClosed()) return;
    this.sub = this.nc.subscribe(`${this.inbox}.*`, {
      callback: (err, m) => {
        if (err || !m) return;
        const key = m.subject.slice(this.inbox.length + 1);
        const done = this.waiting.get(key);
        if (!done) return;
        this.waiting.delete(key);
        done(jetStreamAckError(m));
      },
    });
  }

  /** Publishes every item now; resolves (never rejects) to one result per item, in order: null once acked, else the error. */
  publishAll(items: readonly BatchItem[]): Promise<Array<Error | null>> {
    if (!items.length) return Promise.resolve([]);
    const keys: string[] = [];
    try {
      this.subscribe();
    } catch (e) {
      return Promise.resolve(items.map(() => (e instanceof Error ? e : new Error(String(e)))));
    }
    const results = items.map(
      (item) =>
        new Promise<Error | null>((resolve) => {
          const key = (++this.seq).toString(36);
          keys.push(key);
          const trace = traceHooks.current?.publish(item.subject, item.event.event_id, false);
          this.waiting.set(
            key,
            trace
              ? (err) => {
                  trace.end(err ?? undefined);
                  resolve(err);
                }
              : resolve,
          );
          try {
            const h = headers();
            h.set('Nats-Msg-Id', item.event.event_id);
            if (trace) for (const [k, v] of Object.entries(trace.headers)) h.set(k, v);
            this.nc.publish(item.subject, enc.encode(JSON.stringify(item.event)), { reply: `${this.inbox}.${key}`, headers: h });
          } catch (e) {
            this.waiting.delete(key);
            trace?.end(e);
            resolve(e instanceof Error ? e : new Error(String(e)));
          }
        }),
    );
    const timer = setTimeout(() => this.fail(keys, new Error(`JetStream publish failed: no ack within ${this.timeoutMs} ms`)), this.timeoutMs);
    timer.unref();
    return Promise.all(results).finally(() => clearTimeout(timer));
  }

  /** Stops listening for acks; events still waiting count as failed. */
  close(): void {
    this.fail([...this.waiting.keys()], new Error('JetStream publish failed: publisher closed'));
    this.sub?.unsubscribe();
    this.sub = null;
  }

  private fail(keys: readonly string[], err: Error): void {
    for (const k of keys) {
      const done = this.waiting.get(k);
      if (!done) continue;
      this.waiting.delete(k);
      done(err);
    }
  }
}
