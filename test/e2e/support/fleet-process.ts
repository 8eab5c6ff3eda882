/**
 * A fleet of its own: scripts/fleet.mjs as a child process at a port offset, with its own database, stream
 * prefix and control port; started once it prints FLEET_READY, stopped with SIGTERM (SIGKILL after a grace).
 * The e2e fleet (global-setup.ts), the fleets some e2e tests run beside it (a second gateway, replicas) and
 * the fault suite's fleet (test/faults/support/fleet.ts) all start and stop here, and reach the runner's
 * control endpoint through `controlFleet`. Node built-ins only, so that test/faults can import it too.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';

/** The repository's root (where scripts/fleet.mjs runs from). */
export const REPO_ROOT = path.resolve(__dirname, '../../..');

export interface FleetProcessOptions {
  /** how the errors name it, e.g. "the second fleet" */
  name: string;
  offset: number;
  db: string;
  prefix: string;
  controlPort: number;
  /** the fleet's environment, on top of this process's */
  env: Record<string, string>;
  /** once ready, copy the runner's stderr (it reports services that exit unexpectedly) to this process's stderr */
  echoStderr?: boolean;
}

/** How long a fleet may take to print FLEET_READY. */
const READY_WITHIN_MS = 150_000;

/** Start a fleet; resolves once every service is ready. A fleet that exits or is not ready in time is killed, and the error carries its output. */
export async function startFleetProcess(o: FleetProcessOptions): Promise<ChildProcess> {
  const args = ['--offset', String(o.offset), '--db', o.db, '--prefix', o.prefix, '--control-port', String(o.controlPort), '--quiet', '--no-stand-in-demo'];
  const child = spawn(process.execPath, [path.join(REPO_ROOT, 'scripts/fleet.mjs'), ...args], { cwd: REPO_ROOT, env: { ...process.env, ...o.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${o.name} did not start in ${READY_WITHIN_MS / 1000} s:\n${output}`)), READY_WITHIN_MS);
      const onData = (b: Buffer) => {
        output = (output + b.toString()).slice(-20_000);
        if (output.includes('FLEET_READY')) {
          clearTimeout(timer);
          resolve();
        }
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`${o.name} exited (${code}):\n${output}`));
      });
    });
  } catch (e) {
    if (child.exitCode === null) child.kill('SIGKILL');
    throw e;
  }
  child.stdout!.removeAllListeners('data');
  child.stderr!.removeAllListeners('data');
  child.removeAllListeners('exit');
  child.stdout!.resume();
  if (o.echoStderr) child.stderr!.on('data', (b: Buffer) => process.stderr.write(b));
  else child.stderr!.resume();
  return child;
}

/** Stop a fleet started by startFleetProcess: SIGTERM, SIGKILL after 25 s. */
export async function stopFleetProcess(child: ChildProcess | undefined): Promise<void> {
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

/** Stop/start/kill one service of a running fleet for real (the runner's control endpoint at `controlUrl`). */
export async function controlFleet(controlUrl: string, action: 'stop' | 'start' | 'kill', service: string): Promise<void> {
  const res = await fetch(`${controlUrl}/${action}/${service}`, { method: 'POST' });
  if (!res.ok) throw new Error(`fleet ${action} ${service} failed: ${res.status} ${await res.text()}`);
}
