/**
 * Where a secret could leak to, searched for real: the e2e database (pg_dump), the fleet's log files,
 * every Redis key and every message of the fleet's JetStream streams. Used by the tests that prove plaintext secrets and personal data are stored nowhere.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { createRedis, waitForRedis } from '@agw/shared';
import { connect } from 'nats';
import { E2E_DATABASE_URL, E2E_OFFSET, E2E_REDIS_URL, E2E_STREAM_PREFIX } from './e2e-env';

/**
 * Tables of the e2e database whose data contains `needle` (pg_dump of the whole database). `--section=data`
 * dumps the same rows as `--data-only` without its foreign-key ordering pass, which warned about the
 * self-reference of managed_agent_configs on every call (this dump is searched, never restored).
 */
export function tablesContaining(needle: string): string[] {
  const dump = execFileSync('pg_dump', ['--section=data', '--no-owner', E2E_DATABASE_URL], { maxBuffer: 1024 * 1024 * 1024 }).toString();
  const out: string[] = [];
  for (const section of dump.split(/^COPY /m).slice(1)) if (section.includes(needle)) out.push(section.slice(0, section.indexOf(' ')));
  return out;
}

/** Log files of the e2e fleet that contain `needle`. */
export function logsContaining(needle: string): string[] {
  const dir = path.resolve(__dirname, `../../../.run/logs-${E2E_OFFSET}`);
  return readdirSync(dir).filter((f) => readFileSync(path.join(dir, f), 'utf8').includes(needle));
}

/** Redis keys (any type) whose name or value contains `needle`. */
export async function redisContaining(needle: string): Promise<string[]> {
  const redis = createRedis(E2E_REDIS_URL);
  const found: string[] = [];
  try {
    await waitForRedis(redis);
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'COUNT', 1000);
      cursor = next;
      for (const key of keys) {
        const type = await redis.type(key);
        let value: unknown = null;
        if (type === 'string') value = await redis.getBuffer(key).then((b) => b?.toString('latin1'));
        else if (type === 'hash') value = await redis.hgetall(key);
        else if (type === 'list') value = await redis.lrange(key, 0, -1);
        else if (type === 'set') value = await redis.smembers(key);
        else if (type === 'zset') value = await redis.zrange(key, 0, -1);
        else if (type === 'stream') value = await redis.xrange(key, '-', '+');
        if (key.includes(needle) || JSON.stringify(value ?? '').includes(needle)) found.push(key);
      }
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
  return found;
}

/** JetStream streams of the e2e fleet (`E2E_*`) with a message whose subject or data contains `needle`. */
export async function streamsContaining(needle: string): Promise<string[]> {
  const nc = await connect({ servers: '127.0.0.1:4222', name: 'e2e-leak-search' });
  const found = new Set<string>();
  try {
    const jsm = await nc.jetstreamManager();
    const dec = new TextDecoder();
    for await (const info of jsm.streams.list()) {
      const name = info.config.name;
      if (!name.startsWith(`${E2E_STREAM_PREFIX}_`) || info.state.messages === 0) continue;
      for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
        const m = await jsm.streams.getMessage(name, { seq }).catch(() => null);
        if (m && (m.subject.includes(needle) || dec.decode(m.data).includes(needle))) {
          found.add(name);
          break;
        }
      }
    }
  } finally {
    await nc.close();
  }
  return [...found];
}
