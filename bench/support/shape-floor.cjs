#!/usr/bin/env node
// The fleet's fixed shape with no work at any hop: what a governed call would cost, and how long it would
// take one at a time, if every service did nothing but pass it on (`bench:load --floor`, docs/performance.md,
// "The shape's floor"). Three processes, one per role, on the fleet's own libraries (@grpc/grpc-js, ioredis,
// pg, nats, as @agw/shared resolves them) and the same stores (Redis, Postgres in database `agw_floor`,
// JetStream stream `FLOOR_EVENTS`):
//
//   gateway  node:http, POST only: reads the body and JSON.parse's it; ONE Redis script (the API key's
//            tenant and a rate-limit counter, as the gateway's key-and-rate-limit script); a call to the
//            policy, then one to the audit, each a message on a long-lived bidirectional gRPC stream (as the
//            fleet multiplexes them); answers 200 with a small JSON body.
//   policy   gRPC: per call ONE Redis script (the agent's behavioral record and what it reads back, as the
//            policy's recordForPass2), answers "allow".
//   audit    gRPC: group commit (the calls that arrive while a commit runs wait for the next one): one
//            INSERT of the batch's rows, answered after its commit (each answer after its record's commit,
//            as the fleet), then each row's event published on JetStream, the acks awaited off the answer's path.
//
// What it leaves out, so a lower bound: protobuf (a message is the call's bytes behind an 8-byte call id),
// schema and key-scope checks, hard constraints, Rego, the hash chain (no audit_append function, no
// outbox), metrics, logs, the settings cache, tracing. Every hop and every store request of the real
// concurrency-1 path is here: client → gateway → Redis → gateway → policy → Redis → policy → gateway →
// audit → Postgres → audit → gateway → client.
//
//   node bench/support/shape-floor.cjs gateway <http port> <policy port> <audit port>
//   node bench/support/shape-floor.cjs policy <grpc port>
//   node bench/support/shape-floor.cjs audit <grpc port> <database url>
// Prints FLOOR_READY when it serves.
'use strict';
const path = require('node:path');
const { createRequire } = require('node:module');

const sharedRequire = createRequire(path.join(__dirname, '../../packages/shared/package.json'));
const grpc = sharedRequire('@grpc/grpc-js');
const Redis = sharedRequire('ioredis');

const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const NATS_URL = process.env.NATS_URL || 'nats://127.0.0.1:4222';
// as @agw/shared's createRedis: the commands of one event-loop turn leave in one write
const redisClient = () => new Redis(REDIS_URL, { enableAutoPipelining: true });

// ---- the wire: one envelope for both directions, a call id and the message's bytes
const frame = (id, payload) => {
  const b = Buffer.allocUnsafe(8 + payload.length);
  b.writeBigUInt64BE(BigInt(id), 0);
  payload.copy(b, 8);
  return b;
};
const idOf = (b) => Number(b.readBigUInt64BE(0));
const bodyOf = (b) => b.subarray(8);
const bytes = { serialize: (b) => b, deserialize: (b) => b };
const method = (name) => ({
  path: `/agw.floor.v1.Floor/${name}`,
  requestStream: true,
  responseStream: true,
  requestSerialize: bytes.serialize,
  requestDeserialize: bytes.deserialize,
  responseSerialize: bytes.serialize,
  responseDeserialize: bytes.deserialize,
});
const SERVICE = { Evaluate: method('Evaluate'), Append: method('Append') };

/** serve one stream method: `handle(bytes)` answers each message, in any order */
function serve(port, name, handle) {
  const server = new grpc.Server();
  const impl = {
    [name]: (call) => {
      call.on('data', (m) =>
        handle(bodyOf(m)).then(
          (answer) => call.write(frame(idOf(m), answer)),
          (e) => {
            console.error(e);
            process.exit(1);
          },
        ),
      );
      call.on('end', () => call.end());
    },
  };
  server.addService({ [name]: SERVICE[name] }, impl);
  server.bindAsync(`127.0.0.1:${port}`, grpc.ServerCredentials.createInsecure(), (err) => {
    if (err) throw err;
    console.log('FLOOR_READY');
  });
}

/** unary-shaped calls over one long-lived stream of `name` */
function streamClient(port, name) {
  const Client = grpc.makeGenericClientConstructor({ [name]: SERVICE[name] });
  const client = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  const pending = new Map();
  let lastId = 0;
  const stream = client[name]();
  stream.on('data', (m) => {
    const resolve = pending.get(idOf(m));
    pending.delete(idOf(m));
    resolve(bodyOf(m));
  });
  stream.on('error', (e) => {
    console.error(`floor ${name} stream: ${e.message}`);
    process.exit(1);
  });
  return (payload) =>
    new Promise((resolve) => {
      const id = ++lastId;
      pending.set(id, resolve);
      stream.write(frame(id, payload));
    });
}

// ---- the roles
function gateway(httpPort, policyPort, auditPort) {
  const http = require('node:http');
  const redis = redisClient();
  // the key's tenant, and a per-second window counter for the rate limit
  redis.defineCommand('keyAndRate', {
    numberOfKeys: 2,
    lua: `local t = redis.call('GET', KEYS[1]) or 'floor-tenant'
          local n = redis.call('INCR', KEYS[2])
          if n == 1 then redis.call('PEXPIRE', KEYS[2], 2000) end
          return {t, n}`,
  });
  const evaluate = streamClient(policyPort, 'Evaluate');
  const append = streamClient(auditPort, 'Append');
  const ANSWER_HEADERS = { 'content-type': 'application/json; charset=utf-8' };
  http
    .createServer((req, res) => {
      const chunks = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', async () => {
        const raw = Buffer.concat(chunks);
        const call = JSON.parse(raw.toString('utf8'));
        const key = String(req.headers['x-api-key'] ?? '');
        const t0 = performance.now();
        const [tenant] = await redis.keyAndRate(`floor:key:${key}`, `floor:rate:${key}:${Math.floor(Date.now() / 1000)}`);
        const t1 = performance.now();
        const decision = await evaluate(raw);
        const t2 = performance.now();
        const record = await append(Buffer.from(JSON.stringify({ tenant, call, decision: decision.toString('utf8') })));
        const t3 = performance.now();
        const body = JSON.stringify({ decision: decision.toString('utf8'), record_id: Number(record.toString('utf8')) });
        // each hop's duration, as the gateway reports its steps (the bench prints the medians at concurrency 1)
        const timing = `key_rate;dur=${(t1 - t0).toFixed(2)}, policy;dur=${(t2 - t1).toFixed(2)}, audit;dur=${(t3 - t2).toFixed(2)}`;
        res.writeHead(200, { ...ANSWER_HEADERS, 'content-length': Buffer.byteLength(body), 'server-timing': timing });
        res.end(body);
      });
    })
    .listen(httpPort, '127.0.0.1', () => console.log('FLOOR_READY'));
}

function policy(port) {
  const redis = redisClient();
  // the agent's behavioral record (a counter of the hour) and what the second pass reads back
  redis.defineCommand('recordAndRead', {
    numberOfKeys: 1,
    lua: `local n = redis.call('INCR', KEYS[1])
          if n == 1 then redis.call('EXPIRE', KEYS[1], 3600) end
          return n`,
  });
  const ALLOW = Buffer.from('allow');
  serve(port, 'Evaluate', async (call) => {
    await redis.recordAndRead(`floor:behavior:${call.length}:${Math.floor(Date.now() / 3_600_000)}`);
    return ALLOW;
  });
}

async function audit(port, databaseUrl) {
  const { Pool } = sharedRequire('pg');
  const { connect, headers } = sharedRequire('nats');
  const pool = new Pool({ connectionString: databaseUrl, max: 10 });
  const nc = await connect({ servers: NATS_URL, name: 'floor-audit' });
  // a stream as the fleet's (file storage, limits retention, a duplicate window), removed when stopped
  const jsm = await nc.jetstreamManager();
  await jsm.streams.add({ name: 'FLOOR_EVENTS', subjects: ['floor.>'], max_age: 3600 * 1e9, duplicate_window: 120 * 1e9 }).catch(() => undefined);
  await jsm.streams.purge('FLOOR_EVENTS');
  process.once('SIGTERM', () => {
    void jsm.streams
      .delete('FLOOR_EVENTS')
      .catch(() => undefined)
      .finally(() => process.exit(0));
  });
  await pool.query('CREATE TABLE IF NOT EXISTS floor_records (id bigserial PRIMARY KEY, body jsonb NOT NULL, at timestamptz NOT NULL DEFAULT now())');
  await pool.query('TRUNCATE floor_records');
  const js = nc.jetstream();
  let queue = [];
  let committing = false;
  const commit = async () => {
    committing = true;
    while (queue.length) {
      const batch = queue;
      queue = [];
      const { rows } = await pool.query('INSERT INTO floor_records (body) SELECT * FROM unnest($1::jsonb[]) RETURNING id', [batch.map((b) => b.body)]);
      batch.forEach((b, i) => b.resolve(Buffer.from(String(rows[i].id))));
      // the events after the commit, off the answers' path (the fleet's relay does the same from its outbox)
      void Promise.all(
        batch.map((b, i) => {
          const h = headers();
          h.set('Nats-Msg-Id', `floor-${rows[i].id}`);
          return js.publish('floor.decisions', Buffer.from(b.body), { headers: h });
        }),
      ).catch((e) => console.error(`floor publish: ${e.message}`));
    }
    committing = false;
  };
  serve(port, 'Append', (call) =>
    new Promise((resolve) => {
      queue.push({ body: call.toString('utf8'), resolve });
      if (!committing) void commit();
    }),
  );
}

const [role, ...rest] = process.argv.slice(2);
if (role === 'gateway') gateway(Number(rest[0]), Number(rest[1]), Number(rest[2]));
else if (role === 'policy') policy(Number(rest[0]));
else if (role === 'audit') void audit(Number(rest[0]), rest[1]);
else {
  console.error('usage: shape-floor.cjs gateway|policy|audit ...');
  process.exit(2);
}
