/**
 * Requests this process has sent to each store, counted where they leave: Postgres statements (every
 * `query` of a pool's client, BEGIN and COMMIT included: each is one round trip), Redis commands (ioredis'
 * `sendCommand`; a script call is one command, whatever it runs inside Redis), NATS messages published
 * (events, acks, requests, pull requests) and received, from nats.js' own connection statistics. Every
 * service's `/metrics` shows them (`createMetricsRegistry`): `agw_store_requests_total{store}` and
 * `agw_nats_messages_received_total`; `npm run bench:load` divides them by the governed calls of a run, per
 * service ("round trips per call to each store", docs/history/performance-2026.md).
 *
 * Counted in this module rather than in a metric at each call site: an increment of a plain number on the
 * hot path, read by the registry at scrape time.
 */
import type { NatsConnection } from 'nats';

const sent = { postgres: 0, redis: 0 };
const natsOpen = new Set<NatsConnection>();
const natsClosed = { out: 0, in: 0 };

/** One Postgres statement sent (database.ts). */
export function countPostgresRequest(): void {
  sent.postgres++;
}

/** One Redis command sent (redis.ts). */
export function countRedisRequest(): void {
  sent.redis++;
}

/** A NATS connection whose messages count from now on (bus.ts); a closed one keeps counting what it did. */
export function countNatsConnection(nc: NatsConnection): void {
  natsOpen.add(nc);
  void nc.closed().then(() => {
    const s = nc.stats();
    natsClosed.out += s.outMsgs;
    natsClosed.in += s.inMsgs;
    natsOpen.delete(nc);
  });
}

/** What this process has sent to each store so far, and the NATS messages it received. */
export function storeRequests(): { postgres: number; redis: number; nats: number; natsReceived: number } {
  let out = natsClosed.out;
  let inn = natsClosed.in;
  for (const nc of natsOpen) {
    const s = nc.stats();
    out += s.outMsgs;
    inn += s.inMsgs;
  }
  return { ...sent, nats: out, natsReceived: inn };
}
