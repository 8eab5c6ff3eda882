#!/usr/bin/env node
// The fleet's fixed shape with no work at any hop: what a governed call would cost, and how long it would
// take one at a time, if every service did nothing but pass it on (`bench:load` runs it beside the fleet,
// docs/performance.md, "The shape's floor"). Three processes, one per role, on the fleet's own libraries
// (@grpc/grpc-js, ioredis, pg, nats, as @agw/shared resolves them), its contract (@agw/proto: the two
// multiplexed methods, PolicyService.EvaluateStream and AuditService.AppendStream, their ts-proto codecs
// serialized through withReusedWriter as the fleet's clients and servers do)
// and the same stores (Redis, Postgres in database `agw_floor`, JetStream stream `FLOOR_EVENTS`):
//
//   gateway  node:http, POST only: reads the body and JSON.parse's it; ONE Redis script (the API key's
//            tenant and a rate-limit counter, as the gateway's key-and-rate-limit script); an EvaluateRequest
//            to the policy, then an AppendRequest (the entry, the replay input, an append key) to the audit,
//            each a message on a long-lived bidirectional stream, filled as the gateway fills them;
//            answers 200 with a small JSON body and the three hops' durations in Server-Timing.
//   policy   ONE Redis script per call (the agent's behavioral record and what it reads back, as the
//            policy's recordForPass2), answers an allow with its replay input (constant fields, no Rego).
//   audit    group commit (the calls that arrive while a commit runs wait for the next one): one INSERT of
//            the batch's rows (entry and replay input as one jsonb), each answered after its commit as the
//            audit service answers (ids, hashes, event_queued, commit_ms), then each row's event published
//            on JetStream, the acks awaited off the answer's path.
//
// What it leaves out, so a lower bound: schema and key-scope checks, the PII pre-check, hard constraints,
// Rego, the hash chain (no audit_append function, no outbox), the settings cache, metrics, logs, tracing,
// express. Every hop and every store request of the real concurrency-1 path is here: client → gateway →
// Redis → gateway → policy → Redis → policy → gateway → audit → Postgres → audit → gateway → client.
//
//   node bench/support/shape-floor.cjs gateway <http port> <policy port> <audit port>
//   node bench/support/shape-floor.cjs policy <grpc port>
//   node bench/support/shape-floor.cjs audit <grpc port> <database url>
//   node bench/support/shape-floor.cjs single <http port> <database url>   (the same work in one process)
// Prints FLOOR_READY when it serves.
'use strict';
const { randomUUID } = require('node:crypto');
const path = require('node:path');
const { createRequire } = require('node:module');

const sharedRequire = createRequire(path.join(__dirname, '../../packages/shared/package.json'));
const grpc = sharedRequire('@grpc/grpc-js');
const Redis = sharedRequire('ioredis');

const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const NATS_URL = process.env.NATS_URL || 'nats://127.0.0.1:4222';
/** a Redis client with the two scripts of a call; as @agw/shared's createRedis, the commands of one event-loop turn leave in one write */
const redisClient = () => {
  const redis = new Redis(REDIS_URL, { enableAutoPipelining: true });
  defineScripts(redis);
  return redis;
};

// ---- the wire: the fleet's contract (packages/proto), its two multiplexed methods, as the fleet calls them
// serialized as the fleet serializes (@agw/shared's clients and servers: the process's one writer, withReusedWriter)
const { policy: policyProto, audit: auditProto, withReusedWriter, clientWithReusedWriter } = sharedRequire('@agw/proto');
const METHODS = {
  evaluateStream: { service: withReusedWriter(policyProto.PolicyServiceService), Client: clientWithReusedWriter(policyProto.PolicyServiceClient) },
  appendStream: { service: withReusedWriter(auditProto.AuditServiceService), Client: clientWithReusedWriter(auditProto.AuditServiceClient) },
};

/** serve one multiplexed method: `handle(request)` answers each call's request, in any order */
function serve(port, name, handle) {
  const server = new grpc.Server();
  server.addService(METHODS[name].service, {
    // every other method of the service: grpc-js answers UNIMPLEMENTED
    [name]: (call) => {
      call.on('data', (m) =>
        handle(m.request).then(
          (response) => call.write({ call_id: m.call_id, response, error: undefined }),
          (e) => {
            console.error(e);
            process.exit(1);
          },
        ),
      );
      call.on('end', () => call.end());
    },
  });
  server.bindAsync(`127.0.0.1:${port}`, grpc.ServerCredentials.createInsecure(), (err) => {
    if (err) throw err;
    console.log('FLOOR_READY');
  });
}

/** unary-shaped calls over one long-lived stream of the multiplexed method `name` */
function streamClient(port, name) {
  const client = new METHODS[name].Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  const pending = new Map();
  let lastId = 0;
  const stream = client[name]();
  stream.on('data', (a) => {
    const resolve = pending.get(a.call_id);
    pending.delete(a.call_id);
    resolve(a.response);
  });
  stream.on('error', (e) => {
    console.error(`floor ${name} stream: ${e.message}`);
    process.exit(1);
  });
  return (request) =>
    new Promise((resolve) => {
      const callId = ++lastId;
      pending.set(callId, resolve);
      stream.write({ call_id: callId, request, metadata: {} });
    });
}

// ---- the roles
/** the two Redis scripts of a call: the gateway's and the policy's */
function defineScripts(redis) {
  // the key's tenant, and a per-second window counter for the rate limit
  redis.defineCommand('keyAndRate', {
    numberOfKeys: 2,
    lua: `local t = redis.call('GET', KEYS[1]) or 'floor-tenant'
          local n = redis.call('INCR', KEYS[2])
          if n == 1 then redis.call('PEXPIRE', KEYS[2], 2000) end
          return {t, n}`,
  });
  // the agent's behavioral record (a counter of the hour) and what the second pass reads back
  redis.defineCommand('recordAndRead', {
    numberOfKeys: 1,
    lua: `local n = redis.call('INCR', KEYS[1])
          if n == 1 then redis.call('EXPIRE', KEYS[1], 3600) end
          return n`,
  });
}

/** the gateway's script: the API key's tenant, and the rate limit's counter */
const keyAndRate = (redis, key) => redis.keyAndRate(`floor:key:${key}`, `floor:rate:${key}:${Math.floor(Date.now() / 1000)}`).then(([tenantId]) => tenantId);
/** the policy's script: the agent's record of the hour, and its count read back */
const recordAndRead = (redis, tenantId, agentId) => redis.recordAndRead(`floor:behavior:${tenantId}:${agentId}:${Math.floor(Date.now() / 3_600_000)}`);

/**
 * The HTTP entrance of a gateway role: POST bodies read and JSON.parse'd, `handle(call, apiKey)` answers
 * { body (a JSON string), headers }, sent as a 200.
 */
function serveCalls(port, handle) {
  const http = require('node:http');
  http
    .createServer((req, res) => {
      const chunks = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', async () => {
        const { body, headers } = await handle(JSON.parse(Buffer.concat(chunks).toString('utf8')), String(req.headers['x-api-key'] ?? ''));
        res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), ...headers });
        res.end(body);
      });
    })
    .listen(port, '127.0.0.1', () => console.log('FLOOR_READY'));
}

function gateway(httpPort, policyPort, auditPort) {
  const redis = redisClient();
  const evaluate = streamClient(policyPort, 'evaluateStream');
  const append = streamClient(auditPort, 'appendStream');
  serveCalls(httpPort, async (call, key) => {
    const t0 = performance.now();
    const tenantId = await keyAndRate(redis, key);
    const t1 = performance.now();
    // the messages as the gateway fills them (tool-call.pipeline.ts, decision-recorder.ts)
    const actionId = randomUUID();
    const paramsJson = JSON.stringify(call.params ?? {});
    const toolCall = { agent_id: call.agent_id, agent_type: call.agent_type, agent_version: call.agent_version, tool: call.tool, method: call.method, params: { text: paramsJson }, params_json: paramsJson, pii_detected: false, session_id: '' };
    const decision = await evaluate(policyProto.EvaluateRequest.fromPartial({ tenant_id: tenantId, action_id: actionId, call: toolCall }));
    const t2 = performance.now();
    const entry = auditProto.AuditEntry.fromPartial({
      action_id: actionId,
      ...toolCall,
      decision: decision.decision,
      severity: decision.severity,
      source: 'api',
      bundle_revision: decision.bundle_revision,
      details: { text: '{}' }, details_json: '{}',
      requested_at: new Date().toISOString(),
    });
    const record = await append(
      auditProto.AppendRequest.fromPartial({ tenant_id: tenantId, entry, event_kind: 'allowed', decision_facts: decision.decision_facts, omit_entry: true, append_key: randomUUID(), tenant_has_webhook: false }),
    );
    const t3 = performance.now();
    // each hop's duration, as the gateway reports its steps (the bench prints the medians at concurrency 1)
    const timing = `key_rate;dur=${(t1 - t0).toFixed(2)}, policy;dur=${(t2 - t1).toFixed(2)}, audit;dur=${(t3 - t2).toFixed(2)}`;
    return { body: JSON.stringify({ action_id: actionId, decision: decision.decision, record_id: record.id }), headers: { 'server-timing': timing } };
  });
}

function policy(port) {
  const redis = redisClient();
  serve(port, 'evaluateStream', async (request) => {
    const n = await recordAndRead(redis, request.tenant_id, request.call.agent_id);
    // an allow with what the record lacks for its replay input, as the policy answers one (no Rego: the fields are constants)
    return policyProto.EvaluateResponse.fromPartial({
      decision: 'allow',
      severity: 'none',
      bundle_revision: 'floor-1',
      passes: 1,
      decision_facts: {
        decision: 'allow',
        severity: 'none',
        pii_detected: false,
        behavioral: { action_count_1h: n, action_count_24h: n, tool_count_24h: n, last_action_seconds_ago: 0 },
        passes: 1,
        evaluated_at: new Date().toISOString(),
      },
    });
  });
}

/**
 * The audit's store side: group commit of rows (whatever arrives while a commit runs goes into the next
 * one), each append answered after its commit, then its event published on JetStream off the answer's
 * path (the fleet's relay does the same from its outbox). `append(body)` resolves { id, commitMs }.
 */
async function groupCommitter(databaseUrl, name) {
  const { Pool } = sharedRequire('pg');
  const { connect, headers } = sharedRequire('nats');
  const pool = new Pool({ connectionString: databaseUrl, max: 10 });
  const nc = await connect({ servers: NATS_URL, name });
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
      const committedAt = performance.now();
      batch.forEach((b, i) => b.resolve({ id: Number(rows[i].id), commitMs: committedAt - b.at }));
      void Promise.all(
        batch.map((b, i) => {
          const h = headers();
          h.set('Nats-Msg-Id', `${name}-${rows[i].id}`);
          return js.publish('floor.decisions', Buffer.from(b.body), { headers: h });
        }),
      ).catch((e) => console.error(`floor publish: ${e.message}`));
    }
    committing = false;
  };
  return (body) =>
    new Promise((resolve) => {
      queue.push({ body, at: performance.now(), resolve });
      if (!committing) void commit();
    });
}

async function audit(port, databaseUrl) {
  const append = await groupCommitter(databaseUrl, 'floor-audit');
  const HASH = 'f'.repeat(64); // no chain: every answer carries the same 64 hex digits where the hashes go
  serve(port, 'appendStream', async (request) => {
    // the record and its replay input as one row (the audit service writes them to two tables)
    const { id, commitMs } = await append(JSON.stringify({ tenant_id: request.tenant_id, entry: request.entry, decision_facts: request.decision_facts }));
    // an answer as the audit service's with omit_entry: the ids, the hashes, event_queued, commit_ms
    return auditProto.AuditRecord.fromPartial({ id, tenant_seq: id - 1, prev_hash: HASH, record_hash: HASH, event_queued: true, commit_ms: commitMs });
  });
}

/**
 * The same work in ONE process (`bench:load --single`): no policy or audit hop, so no gRPC and no
 * protobuf; the two Redis scripts one after the other as the two services make them, then the group
 * commit and the publish. A lower bound of the shape the fleet is not: policy and audit inside the gateway.
 */
async function single(httpPort, databaseUrl) {
  const redis = redisClient();
  const append = await groupCommitter(databaseUrl, 'floor-single');
  serveCalls(httpPort, async (call, key) => {
    const tenantId = await keyAndRate(redis, key);
    const n = await recordAndRead(redis, tenantId, call.agent_id);
    const actionId = randomUUID();
    const decisionFacts = { decision: 'allow', severity: 'none', pii_detected: false, behavioral: { action_count_1h: n }, passes: 1, evaluated_at: new Date().toISOString() };
    const { id } = await append(JSON.stringify({ tenant_id: tenantId, entry: { action_id: actionId, ...call, decision: 'allow', requested_at: new Date().toISOString() }, decision_facts: decisionFacts }));
    return { body: JSON.stringify({ action_id: actionId, decision: 'allow', record_id: id }), headers: {} };
  });
}

const [role, ...rest] = process.argv.slice(2);
if (role === 'gateway') gateway(Number(rest[0]), Number(rest[1]), Number(rest[2]));
else if (role === 'policy') policy(Number(rest[0]));
else if (role === 'audit') void audit(Number(rest[0]), rest[1]);
else if (role === 'single') void single(Number(rest[0]), rest[1]);
else {
  console.error('usage: shape-floor.cjs gateway|policy|audit|single ...');
  process.exit(2);
}
