/** Redis through ioredis: hot counters (rate limits, caps, behavioral history, key cache). */
import Redis from 'ioredis';
import { DEFAULT_REDIS_COMMAND_TIMEOUT_MS } from './config';
import { countRedisRequest } from './store-requests';

export type { Redis };

/**
 * `commandTimeoutMs`: the longest a command waits for its answer (0: forever; default REDIS_COMMAND_TIMEOUT_MS's). A Redis that is connected
 * but silent (a partition without a reset, a stopped process) would otherwise hold every command until the
 * kernel gives up on the connection, many minutes later; a command that times out fails as Redis
 * unavailable (`unreachableStore`).
 */
export function createRedis(url: string, options: { commandTimeoutMs?: number } = {}): Redis {
  const commandTimeout = options.commandTimeoutMs ?? DEFAULT_REDIS_COMMAND_TIMEOUT_MS;
  const redis = new Redis(url, {
    ...(commandTimeout > 0 ? { commandTimeout } : {}),
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    lazyConnect: false,
    retryStrategy: (times) => Math.min(times * 200, 2000),
    // commands issued by concurrent requests in one turn of the event loop leave in one socket write (a
    // pipeline flushed on setImmediate), in the order they were issued; transactions (multi) are sent as
    // they are. On loopback every write also runs Redis' side of TCP: fewer writes is less CPU on both ends.
    enableAutoPipelining: true,
  });
  // Connection errors surface on the commands that fail; the client keeps reconnecting.
  redis.on('error', () => undefined);
  // every command this client sends is counted (store-requests.ts), auto-pipelined ones each
  const send = redis.sendCommand.bind(redis);
  redis.sendCommand = (...a: Parameters<Redis['sendCommand']>) => {
    countRedisRequest();
    return send(...a);
  };
  return redis;
}

/** Resolves when the client is ready, or rejects after `timeoutMs`. */
export async function waitForRedis(redis: Redis, timeoutMs = 5000): Promise<void> {
  if (redis.status === 'ready') return;
  await new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => {
      cleanup();
      reject(new Error('redis not ready'));
    }, timeoutMs);
    const onReady = () => {
      cleanup();
      resolve();
    };
    const cleanup = () => {
      clearTimeout(t);
      redis.off('ready', onReady);
    };
    redis.on('ready', onReady);
  });
}
