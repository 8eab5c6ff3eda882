/**
 * The suite's own fleet: scripts/fleet.mjs at the suite's port offset with its own database and stream
 * prefix, Postgres and NATS reached through the suite's TCP proxies (started and stopped by
 * test/e2e/support/fleet-process.ts, as every other fleet of the tests). Each run starts from an empty database
 * and no streams of its prefix (both are the suite's own), so the searches of R6 see this run only.
 */
import { execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { connect } from 'nats';
import { startFleetProcess, stopFleetProcess } from '../../e2e/support/fleet-process';
import { CONTROL_URL, DATABASE_NAME, FLEET_ENV, LOG_DIR, NATS_DIRECT, OFFSET, ROOT, STREAM_PREFIX } from './env';

export async function resetStores(): Promise<void> {
  execFileSync('psql', ['-h', '127.0.0.1', '-U', 'postgres', '-d', 'postgres', '-qAt', '-c', `DROP DATABASE IF EXISTS "${DATABASE_NAME}" WITH (FORCE)`], { stdio: 'pipe' });
  const nc = await connect({ servers: `${NATS_DIRECT.host}:${NATS_DIRECT.port}` });
  try {
    const jsm = await nc.jetstreamManager();
    for await (const s of jsm.streams.list()) if (s.config.name.startsWith(`${STREAM_PREFIX}_`)) await jsm.streams.delete(s.config.name);
  } finally {
    await nc.close();
  }
  if (existsSync(LOG_DIR)) rmSync(LOG_DIR, { recursive: true, force: true });
  mkdirSync(LOG_DIR, { recursive: true });
}

export async function startFleet(): Promise<ChildProcess> {
  for (const svc of ['gateway', 'policy', 'audit', 'vault', 'webhook', 'anchor', 'managed'])
    if (!existsSync(path.join(ROOT, 'services', svc, 'dist', 'main.js'))) throw new Error(`services/${svc} is not built: run \`pnpm exec turbo run build\` first`);
  return startFleetProcess({ name: 'fault fleet', offset: OFFSET, db: DATABASE_NAME, prefix: STREAM_PREFIX, controlPort: Number(new URL(CONTROL_URL).port), env: FLEET_ENV, echoStderr: true });
}

export const stopFleet = stopFleetProcess;
