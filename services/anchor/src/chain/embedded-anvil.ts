/**
 * The embedded local chain: an `anvil` child process (binary shipped by the @foundry-rs/anvil package)
 * started when no ANCHOR_RPC_URL is configured, killed on shutdown. Its state lives in a state file so
 * a restart keeps the deployed contract and the anchored roots (`--state`).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from '@agw/shared';

/** The platform binary of @foundry-rs/anvil, or its node wrapper when the binary cannot be found. */
export function anvilCommand(): { command: string; args: string[] } {
  const pkgDir = path.dirname(require.resolve('@foundry-rs/anvil/package.json'));
  const arch = process.arch === 'x64' ? 'amd64' : process.arch;
  try {
    const platDir = path.dirname(require.resolve(`@foundry-rs/anvil-${process.platform}-${arch}/package.json`, { paths: [pkgDir] }));
    const bin = path.join(platDir, 'bin', process.platform === 'win32' ? 'anvil.exe' : 'anvil');
    if (existsSync(bin)) return { command: bin, args: [] };
  } catch {
    /* fall back to the wrapper */
  }
  return { command: process.execPath, args: [path.join(pkgDir, 'bin.mjs')] };
}

export interface EmbeddedAnvil {
  rpcUrl: string;
  chainId: number;
  stop(): Promise<void>;
}

async function rpcReady(url: string): Promise<boolean> {
  try {
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }) });
    return res.ok;
  } catch {
    return false;
  }
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/**
 * An anvil left behind by a previous run of this service (its parent was SIGKILLed, so it never got to
 * stop it) still holds the port: it is recognised by the pid file and stopped, never any other process.
 */
async function stopOrphan(pidFile: string, logger: Logger): Promise<void> {
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').trim());
  let cmd = '';
  try {
    cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    /* not running (or no /proc) */
  }
  if (pid > 0 && alive(pid) && cmd.includes('anvil')) {
    logger.warn({ pid }, 'stopping the anvil node a previous run left behind');
    process.kill(pid, 'SIGTERM');
    for (let i = 0; i < 60 && alive(pid); i++) await new Promise((r) => setTimeout(r, 50));
    if (alive(pid)) process.kill(pid, 'SIGKILL');
  }
  rmSync(pidFile, { force: true });
}

export async function startEmbeddedAnvil(o: { host: string; port: number; chainId: number; stateFile?: string; logger: Logger; timeoutMs?: number }): Promise<EmbeddedAnvil> {
  const rpcUrl = `http://${o.host}:${o.port}`;
  const pidFile = path.resolve('.run', 'anvil', `anvil-${o.port}.pid`);
  await stopOrphan(pidFile, o.logger);
  if (await rpcReady(rpcUrl)) throw new Error(`port ${o.port} already serves an RPC node; set ANCHOR_ANVIL_PORT or ANCHOR_RPC_URL`);
  const { command, args } = anvilCommand();
  const extra = ['--host', o.host, '--port', String(o.port), '--chain-id', String(o.chainId), '--silent'];
  if (o.stateFile) {
    mkdirSync(path.dirname(o.stateFile), { recursive: true });
    extra.push('--state', o.stateFile);
  }
  const child: ChildProcess = spawn(command, [...args, ...extra], { stdio: ['ignore', 'pipe', 'pipe'] });
  mkdirSync(path.dirname(pidFile), { recursive: true });
  if (child.pid) writeFileSync(pidFile, String(child.pid));
  let exited = false;
  let output = '';
  child.stdout?.on('data', (b: Buffer) => (output = (output + b.toString()).slice(-2000)));
  child.stderr?.on('data', (b: Buffer) => (output = (output + b.toString()).slice(-2000)));
  child.on('exit', (code, signal) => {
    exited = true;
    o.logger.info({ code, signal }, 'embedded anvil exited');
  });
  const until = Date.now() + (o.timeoutMs ?? 15_000);
  while (!(await rpcReady(rpcUrl))) {
    if (exited) throw new Error(`anvil exited during start-up: ${output.trim()}`);
    if (Date.now() > until) {
      child.kill('SIGKILL');
      throw new Error(`anvil did not answer on ${rpcUrl}: ${output.trim()}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  o.logger.info({ rpcUrl, chainId: o.chainId, pid: child.pid }, 'embedded anvil started');
  return {
    rpcUrl,
    chainId: o.chainId,
    stop: () =>
      new Promise<void>((resolve) => {
        if (exited) return resolve();
        const t = setTimeout(() => child.kill('SIGKILL'), 3000);
        child.once('exit', () => {
          clearTimeout(t);
          rmSync(pidFile, { force: true });
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}
