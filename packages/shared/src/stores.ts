/** Reachability checks of the shared stores, with how to start each one when it is down. */
import net from 'node:net';
import { sql } from 'kysely';
import type { Bus } from './bus/bus';
import type { Db } from './db/database';

export const STORE_HINTS = {
  postgres: "pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start",
  redis: 'redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no',
  nats: 'nats-server -a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server &',
};

/** Resolves when a TCP connection to host:port opens within `timeoutMs`. */
export function tcpReachable(host: string, port: number, timeoutMs = 1500): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host, port });
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(timeoutMs, () => done(false));
    s.once('connect', () => done(true));
    s.once('error', () => done(false));
  });
}

/** host and port of a store URL, with the scheme's default port. */
export function hostPort(url: string, defaultPort: number): { host: string; port: number } {
  const u = new URL(url);
  return { host: u.hostname || '127.0.0.1', port: u.port ? Number(u.port) : defaultPort };
}

/** Readiness probe of Postgres: one round trip. */
export async function pingPostgres(db: Db): Promise<void> {
  await sql`SELECT 1`.execute(db);
}

/** Readiness probe of NATS: the connection is open and the server answers a flush. */
export async function pingNats(bus: Bus): Promise<void> {
  if (bus.nc.isClosed()) throw new Error('NATS connection closed');
  await bus.nc.flush();
}
