/** Starts the e2e fleet (scripts/fleet.mjs at a port offset, own database and stream prefix) once. */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { E2E_CONTRACT_LOG, E2E_CONTROL_URL, E2E_DATABASE_NAME, E2E_ENV, E2E_OFFSET, E2E_STREAM_PREFIX } from './e2e-env';

export default async function globalSetup(): Promise<void> {
  // the contract log starts empty; support/api.ts appends every response the run sees
  mkdirSync(path.dirname(E2E_CONTRACT_LOG), { recursive: true });
  writeFileSync(E2E_CONTRACT_LOG, '');
  process.env.E2E_CONTRACT_LOG = E2E_CONTRACT_LOG;
  (globalThis as { __FLEET__?: unknown }).__FLEET__ = await startFleet();
}

/** Start the e2e fleet with `extraEnv` on top of E2E_ENV; resolves once every service is ready. */
export async function startFleet(extraEnv: Record<string, string> = {}): Promise<ChildProcess> {
  const root = path.resolve(__dirname, '../../..');
  const child = spawn(
    process.execPath,
    [
      path.join(root, 'scripts/fleet.mjs'),
      '--offset',
      String(E2E_OFFSET),
      '--db',
      E2E_DATABASE_NAME,
      '--prefix',
      E2E_STREAM_PREFIX,
      '--control-port',
      new URL(E2E_CONTROL_URL).port,
      '--quiet',
      '--no-stand-in-demo',
    ],
    { cwd: root, env: { ...process.env, ...E2E_ENV, ...extraEnv }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`e2e fleet did not start in 120 s:\n${output}`)), 120_000);
    const onData = (b: Buffer) => {
      output += b.toString();
      if (output.includes('FLEET_READY')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`e2e fleet exited (${code}):\n${output}`));
    });
  });
  child.stdout.removeAllListeners('data');
  child.stderr.removeAllListeners('data');
  child.stdout.resume();
  child.stderr.resume();
  child.removeAllListeners('exit');
  return child;
}
