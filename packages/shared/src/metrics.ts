/** Prometheus metrics: one registry per process, default Node metrics included. */
import { Counter, Gauge, Histogram, Registry, Summary, collectDefaultMetrics } from 'prom-client';
import { type PeerCallTally, peerCalls } from './peer-calls';
import { storeRequests } from './store-requests';

export { Counter, Gauge, Histogram, Registry, Summary };

export function createMetricsRegistry(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  registerStoreRequests(registry);
  registerPeerCalls(registry);
  return registry;
}

/** The requests this process sent to each store (store-requests.ts), read at scrape time. */
function registerStoreRequests(registry: Registry): void {
  new Counter({
    name: 'agw_store_requests_total',
    help: 'Requests this process sent to a store: Postgres statements, Redis commands (a script call is one), NATS messages published',
    labelNames: ['store'],
    registers: [registry],
    collect() {
      const n = storeRequests();
      this.reset();
      for (const store of ['postgres', 'redis', 'nats'] as const) if (n[store] > 0) this.inc({ store }, n[store]);
    },
  });
  new Counter({
    name: 'agw_nats_messages_received_total',
    help: 'NATS messages delivered to this process (events, acks, replies)',
    registers: [registry],
    collect() {
      this.reset();
      const n = storeRequests().natsReceived;
      if (n > 0) this.inc(n);
    },
  });
}

/** The gRPC calls this process made to its peers (peer-calls.ts), read at scrape time: how many, and how long their callers waited. */
function registerPeerCalls(registry: Registry): void {
  const counters = [
    { name: 'agw_peer_calls_total', help: 'gRPC calls this process made to a peer service, by outcome (ok, or the error code); one per call whatever its retries', of: (t: PeerCallTally) => t.calls },
    { name: 'agw_peer_call_seconds_total', help: 'Seconds callers waited for gRPC calls to a peer service (divided by agw_peer_calls_total: the mean), by outcome', of: (t: PeerCallTally) => t.seconds },
  ];
  for (const c of counters)
    new Counter({
      name: c.name,
      help: c.help,
      labelNames: ['peer', 'method', 'outcome'],
      registers: [registry],
      collect() {
        this.reset();
        for (const t of peerCalls()) if (t.calls > 0) this.inc({ peer: t.peer, method: t.method, outcome: t.outcome }, c.of(t));
      },
    });
}
