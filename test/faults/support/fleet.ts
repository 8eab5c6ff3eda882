/**
 * The suite's own fleet: scripts/fleet.mjs at the suite's port offset with its own database and stream
 * prefix, Postgres and NATS reached through the suite's TCP proxies. Each run starts from an empty database
 * and no streams of its prefix (both are the suite's own), so the searches of R6 see this run only.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { connect } from 'nats';
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
  const child = spawn(
    process.execPath,
    [
      path.join(ROOT, 'scripts/fleet.mjs'),
      '--offset', String(OFFSET),
      '--db', DATABASE_NAME,
      '--prefix', STREAM_PREFIX,
      '--control-port', new URL(CONTROL_URL).port,
      '--quiet',
      '--no-stand-in-demo',
    ],
    { cwd: ROOT, env: { ...process.env, ...FLEET_ENV }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`fault fleet did not start in 150 s:\n${output}`)), 150_000);
    const onData = (b: Buffer) => {
      output += b.toString();
      if (output.includes('FLEET_READY')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`fault fleet exited (${code}):\n${output}`));
    });
  });
  child.stdout!.removeAllListeners('data');
  child.stderr!.removeAllListeners('data');
  // the runner reports services that exit unexpectedly; keep that visible in the suite's output
  child.stderr!.on('data', (b: Buffer) => process.stderr.write(b));
  child.stdout!.resume();
  child.removeAllListeners('exit');
  return child;
}

export async function stopFleet(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null) return;
  await new Promise<void>((resolve) => {
    const t = setTimeout(() => {
      child.kill('SIGKILL');
      resolve();
    }, 25_000);
    child.once('exit', () => {
      clearTimeout(t);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
