/** Starts the e2e fleet (scripts/fleet.mjs at a port offset, own database and stream prefix) once. */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { E2E_CONTROL_URL, E2E_DATABASE_NAME, E2E_ENV, E2E_OFFSET, E2E_STREAM_PREFIX } from './e2e-env';

export default async function globalSetup(): Promise<void> {
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
    { cwd: root, env: { ...process.env, ...E2E_ENV }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  (globalThis as { __FLEET__?: unknown }).__FLEET__ = child;
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
}
