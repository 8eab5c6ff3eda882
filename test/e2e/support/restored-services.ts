/**
 * The services of the restore drill (docs/reliability.md, "Restore drill"): the policy, audit, vault and
 * gateway services started as real processes (their built `dist/main.js`, as scripts/fleet.mjs starts them)
 * on a restored database, beside the e2e fleet:
 *
 * - every port is a free loopback port (`freeLoopbackPort`); the peers it does not start (webhook, anchor,
 *   managed) are named by a free port nothing listens on, so a call to them fails as "unreachable";
 * - a Redis database and a JetStream stream prefix of their own (the e2e fleet's API-key cache must not
 *   answer for the restored database; the streams are deleted by `stop`);
 * - the same SoftHSM2 token as the e2e fleet (the vault's default `SOFTHSM2_CONF`, `.run/softhsm`), as a
 *   restore on the same deployment has: the keys of the restored rows live there.
 *
 * Each service's output goes to `.run/logs-restore-<offset>/<service>.log`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { TEST_NATS_URL, freeLoopbackPort, streams } from '@agw/shared';
import { connect } from 'nats';
import { E2E_ENV, E2E_OFFSET, E2E_REDIS_URL, E2E_STREAM_PREFIX } from './e2e-env';

const ROOT = path.resolve(__dirname, '../../..');
const NODE_FLAGS = JSON.parse(readFileSync(path.join(ROOT, 'scripts/node-flags.json'), 'utf8')) as string[];

export interface RestoredServices {
  /** the restored gateway's public base URL (`http://127.0.0.1:<port>/api`) */
  baseUrl: string;
  databaseUrl: string;
  logDir: string;
  /** SIGTERM every service (SIGKILL after 8 s), then delete the streams of its prefix */
  stop(): Promise<void>;
}

interface Proc {
  name: string;
  child: ChildProcess;
  opsPort: number;
  log: string;
}

/** A Redis database of the e2e Redis other than the e2e fleet's own (1-15). */
function otherRedisUrl(): string {
  const u = new URL(E2E_REDIS_URL);
  const db = Number(u.pathname.slice(1) || '0');
  u.pathname = `/${(db % 15) + 1}`;
  return u.toString();
}

function tail(file: string, n = 20): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-n).join('\n');
  } catch {
    return '';
  }
}

function status(url: string): Promise<number> {
  return new Promise((resolve) => {
    const req = http.get(url, { timeout: 1000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', () => resolve(0));
    req.on('timeout', () => {
      req.destroy();
      resolve(0);
    });
  });
}

async function waitReady(p: Proc, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (p.child.exitCode !== null || p.child.signalCode !== null) throw new Error(`restored ${p.name} exited during start-up:\n${tail(p.log)}`);
    if ((await status(`http://127.0.0.1:${p.opsPort}/readyz`)) === 200) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`restored ${p.name} not ready after ${timeoutMs / 1000} s:\n${tail(p.log)}`);
}

async function stopProc(p: Proc): Promise<void> {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    const t = setTimeout(() => p.child.kill('SIGKILL'), 8000);
    p.child.once('exit', () => {
      clearTimeout(t);
      resolve();
    });
    p.child.kill('SIGTERM');
  });
}

/** Start policy, audit and vault, then the gateway, on `databaseUrl`; resolves once each answers /readyz. */
export async function startRestoredServices(databaseUrl: string, o: { timeoutMs?: number } = {}): Promise<RestoredServices> {
  const timeoutMs = o.timeoutMs ?? 60_000;
  const logDir = path.join(ROOT, '.run', `logs-restore-${E2E_OFFSET}`);
  mkdirSync(logDir, { recursive: true });
  const port = async () => freeLoopbackPort();
  const ports = {
    policy: { grpc: await port(), ops: await port() },
    audit: { grpc: await port(), ops: await port() },
    vault: { grpc: await port(), ops: await port() },
    gateway: { http: await port(), ops: await port() },
    absent: await port(),
  };
  const prefix = `${E2E_STREAM_PREFIX}RESTORE`;
  const base: Record<string, string> = {
    ...E2E_ENV,
    DATABASE_URL: databaseUrl,
    REDIS_URL: otherRedisUrl(),
    NATS_URL: TEST_NATS_URL,
    AGW_STREAM_PREFIX: prefix,
    AGW_PROFILE: 'local',
    LOG_LEVEL: 'info',
    JWT_SECRET: randomBytes(32).toString('base64url'),
    POLICY_GRPC_URL: `127.0.0.1:${ports.policy.grpc}`,
    AUDIT_GRPC_URL: `127.0.0.1:${ports.audit.grpc}`,
    VAULT_GRPC_URL: `127.0.0.1:${ports.vault.grpc}`,
    WEBHOOK_GRPC_URL: `127.0.0.1:${ports.absent}`,
    ANCHOR_GRPC_URL: `127.0.0.1:${ports.absent}`,
    MANAGED_GRPC_URL: `127.0.0.1:${ports.absent}`,
    GATEWAY_PORT: String(ports.gateway.http),
    PUBLIC_BASE_URL: `http://127.0.0.1:${ports.gateway.http}/api`,
    MERKLE_SCHEDULE_ENABLED: 'false',
    ANCHOR_SCHEDULE_ENABLED: 'false',
  };
  const own: Record<string, Record<string, string>> = {
    policy: { POLICY_GRPC_PORT: String(ports.policy.grpc), POLICY_OPS_PORT: String(ports.policy.ops) },
    audit: { AUDIT_GRPC_PORT: String(ports.audit.grpc), AUDIT_OPS_PORT: String(ports.audit.ops) },
    vault: { VAULT_GRPC_PORT: String(ports.vault.grpc), VAULT_OPS_PORT: String(ports.vault.ops) },
    gateway: { GATEWAY_OPS_PORT: String(ports.gateway.ops) },
  };
  const procs: Proc[] = [];
  const start = (name: 'policy' | 'audit' | 'vault' | 'gateway'): Proc => {
    const entry = path.join(ROOT, 'services', name, 'dist', 'main.js');
    if (!existsSync(entry)) throw new Error(`${name} is not built (${entry}); run the build first`);
    const log = path.join(logDir, `${name}.log`);
    const out = createWriteStream(log, { flags: 'a' });
    const env: NodeJS.ProcessEnv = { ...process.env, ...base, ...own[name] };
    // the V8 flags every service runs with (scripts/fleet.mjs, the Dockerfile)
    const child = spawn(process.execPath, [...NODE_FLAGS, entry], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.pipe(out, { end: false });
    child.stderr!.pipe(out, { end: false });
    child.once('exit', () => out.end());
    const p = { name, child, opsPort: Number(own[name][`${name.toUpperCase()}_OPS_PORT`]), log };
    procs.push(p);
    return p;
  };
  const stop = async () => {
    // the gateway first (it calls the others), then the services behind it
    for (const p of [...procs].reverse()) await stopProc(p);
    const nc = await connect({ servers: TEST_NATS_URL, name: 'restore-drill-cleanup' });
    try {
      const jsm = await nc.jetstreamManager();
      for (const def of Object.values(streams(prefix))) await jsm.streams.delete(def.name).catch(() => false);
    } finally {
      await nc.close();
    }
  };
  try {
    const peers = (['policy', 'audit', 'vault'] as const).map(start);
    await Promise.all(peers.map((p) => waitReady(p, timeoutMs)));
    await waitReady(start('gateway'), timeoutMs);
  } catch (e) {
    await stop();
    throw e;
  }
  return { baseUrl: base.PUBLIC_BASE_URL, databaseUrl, logDir, stop };
}
