/**
 * Read-only looks at what the fleet stored: its Postgres database (direct, not through the proxy), its
 * JetStream streams, and, for R6, every place a secret could leak to. The leak search follows
 * test/e2e/support/stores.ts (pg_dump of the database, the fleet's log files, every Redis key and value)
 * but searches many needles in one pass over each store, and adds the fleet's NATS streams.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { createRedis, waitForRedis } from '@agw/shared';
import { connect, type NatsConnection } from 'nats';
import { Pool } from 'pg';
import { LOG_DIR, NATS_DIRECT, PG_DIRECT_URL, REDIS_URL, STREAM_PREFIX } from './env';

let pool: Pool | undefined;
export function db(): Pool {
  pool ??= new Pool({ connectionString: PG_DIRECT_URL, max: 2, options: '-c default_transaction_read_only=on' });
  return pool;
}
export async function closeDb(): Promise<void> {
  await pool?.end();
  pool = undefined;
}

export async function q<T = any>(text: string, values: unknown[] = []): Promise<T[]> {
  return (await db().query(text, values)).rows as T[];
}

export interface RecordRow {
  action_id: string;
  tenant_id: string;
  ref: string | null;
  decision: string;
  violations: string[];
  source: string;
}

/** Every audit record of the given tenants, with the call's `params.ref`. */
export async function auditRecords(tenantIds: string[]): Promise<RecordRow[]> {
  return q<RecordRow>(
    `SELECT action_id::text, tenant_id::text, params->>'ref' AS ref, decision, violations, source FROM audit_records WHERE tenant_id = ANY($1::uuid[])`,
    [tenantIds],
  );
}

async function nats(): Promise<NatsConnection> {
  return connect({ servers: `${NATS_DIRECT.host}:${NATS_DIRECT.port}`, name: 'faults-suite-reader' });
}

/** Every message of one of the fleet's streams (`DECISIONS`, `SESSIONS`, ...), raw text and subject. */
export async function streamMessages(stream: string): Promise<Array<{ subject: string; data: string; seq: number }>> {
  const nc = await nats();
  try {
    const jsm = await nc.jetstreamManager();
    const name = `${STREAM_PREFIX}_${stream}`;
    const info = await jsm.streams.info(name).catch(() => null);
    if (!info || info.state.messages === 0) return [];
    const out: Array<{ subject: string; data: string; seq: number }> = [];
    const dec = new TextDecoder();
    const seqs: number[] = [];
    for (let s = info.state.first_seq; s <= info.state.last_seq; s++) seqs.push(s);
    for (let i = 0; i < seqs.length; i += 64) {
      const batch = await Promise.all(seqs.slice(i, i + 64).map((seq) => jsm.streams.getMessage(name, { seq }).catch(() => null)));
      for (const m of batch) if (m) out.push({ subject: m.subject, data: dec.decode(m.data), seq: m.seq });
    }
    return out;
  } finally {
    await nc.close();
  }
}

export async function streamNames(): Promise<string[]> {
  const nc = await nats();
  try {
    const jsm = await nc.jetstreamManager();
    const names: string[] = [];
    for await (const s of jsm.streams.list()) if (s.config.name.startsWith(`${STREAM_PREFIX}_`)) names.push(s.config.name.slice(STREAM_PREFIX.length + 1));
    return names;
  } finally {
    await nc.close();
  }
}

export interface Needle {
  what: string;
  value: string;
}
export interface LeakHit {
  what: string;
  where: string;
}

/** Every needle found in: each log file of the fleet, each table (pg_dump), Redis keys and values, the fleet's NATS streams. */
export async function searchLeaks(needles: Needle[]): Promise<{ hits: LeakHit[]; searched: Record<string, number> }> {
  const hits: LeakHit[] = [];
  const searched: Record<string, number> = {};
  const look = (where: string, text: string) => {
    for (const n of needles) if (text.includes(n.value)) hits.push({ what: n.what, where });
  };
  // logs
  const logs = readdirSync(LOG_DIR).filter((f) => f.endsWith('.log'));
  let logBytes = 0;
  for (const f of logs) {
    const text = readFileSync(path.join(LOG_DIR, f), 'utf8');
    logBytes += text.length;
    look(`log ${f}`, text);
  }
  searched.log_files = logs.length;
  searched.log_bytes = logBytes;
  // tables
  const dump = execFileSync('pg_dump', ['--section=data', '--no-owner', PG_DIRECT_URL], { maxBuffer: 2 * 1024 * 1024 * 1024 }).toString();
  const sections = dump.split(/^COPY /m).slice(1);
  for (const section of sections) look(`table ${section.slice(0, section.indexOf(' '))}`, section);
  searched.tables = sections.length;
  searched.dump_bytes = dump.length;
  // redis: every key (the fleets on this machine share one Redis; the needles are unique to this run)
  const redis = createRedis(REDIS_URL);
  try {
    await waitForRedis(redis);
    let cursor = '0';
    let keys = 0;
    do {
      const [next, batch] = await redis.scan(cursor, 'COUNT', 1000);
      cursor = next;
      keys += batch.length;
      const types = await Promise.all(batch.map((k) => redis.type(k)));
      const values = await Promise.all(
        batch.map((k, i) => {
          switch (types[i]) {
            case 'string':
              return redis.getBuffer(k).then((b) => b?.toString('latin1') ?? '');
            case 'hash':
              return redis.hgetall(k);
            case 'list':
              return redis.lrange(k, 0, -1);
            case 'set':
              return redis.smembers(k);
            case 'zset':
              return redis.zrange(k, 0, -1);
            case 'stream':
              return redis.xrange(k, '-', '+');
            default:
              return '';
          }
        }),
      );
      batch.forEach((k, i) => look(`redis key ${k.replace(/[0-9a-f-]{36}/g, '<uuid>')}`, `${k}\n${typeof values[i] === 'string' ? values[i] : JSON.stringify(values[i])}`));
    } while (cursor !== '0');
    searched.redis_keys = keys;
  } finally {
    redis.disconnect();
  }
  // NATS streams of the fleet
  let messages = 0;
  for (const s of await streamNames()) {
    const msgs = await streamMessages(s);
    messages += msgs.length;
    for (const m of msgs) look(`stream ${STREAM_PREFIX}_${s}`, `${m.subject}\n${m.data}`);
  }
  searched.stream_messages = messages;
  // one hit per (what, where)
  const unique = [...new Map(hits.map((h) => [`${h.what}|${h.where}`, h])).values()];
  return { hits: unique, searched };
}
