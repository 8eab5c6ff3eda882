/** Starts the e2e fleet (scripts/fleet.mjs at a port offset, own database and stream prefix) once. */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { E2E_CONTRACT_LOG, E2E_CONTROL_URL, E2E_DATABASE_NAME, E2E_ENV, E2E_OFFSET, E2E_STREAM_PREFIX } from './e2e-env';
import { startFleetProcess } from './fleet-process';

export default async function globalSetup(): Promise<void> {
  // the contract log starts empty; support/api.ts appends every response the run sees
  mkdirSync(path.dirname(E2E_CONTRACT_LOG), { recursive: true });
  writeFileSync(E2E_CONTRACT_LOG, '');
  process.env.E2E_CONTRACT_LOG = E2E_CONTRACT_LOG;
  (globalThis as { __FLEET__?: unknown }).__FLEET__ = await startFleet();
}

/** Start the e2e fleet with `extraEnv` on top of E2E_ENV; resolves once every service is ready. */
export function startFleet(extraEnv: Record<string, string> = {}): Promise<ChildProcess> {
  const controlPort = Number(new URL(E2E_CONTROL_URL).port);
  return startFleetProcess({ name: 'e2e fleet', offset: E2E_OFFSET, db: E2E_DATABASE_NAME, prefix: E2E_STREAM_PREFIX, controlPort, env: { ...E2E_ENV, ...extraEnv } });
}
