/** The embedded chain: a real anvil child process; an orphan left by a SIGKILLed run is recognised by its pid file and replaced. */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createLogger, freeLoopbackPort } from '@agw/shared';
import { anvilCommand, startEmbeddedAnvil } from '../src/chain/embedded-anvil';

const logger = createLogger('test', 'silent');

async function chainId(url: string): Promise<string | undefined> {
  try {
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }) });
    return ((await res.json()) as { result: string }).result;
  } catch {
    return undefined;
  }
}

describe('embedded anvil', () => {
  it('starts, answers JSON-RPC with the configured chain id, and stops', async () => {
    const port = await freeLoopbackPort();
    const node = await startEmbeddedAnvil({ host: '127.0.0.1', port, chainId: 31337, logger });
    expect(await chainId(node.rpcUrl)).toBe('0x7a69');
    await node.stop();
    expect(await chainId(node.rpcUrl)).toBeUndefined();
  });

  it('replaces an orphaned anvil of a previous run (pid file), never a foreign process', async () => {
    const port = await freeLoopbackPort();
    const { command, args } = anvilCommand();
    const orphan = spawn(command, [...args, '--port', String(port), '--silent'], { stdio: 'ignore' });
    const url = `http://127.0.0.1:${port}`;
    for (let i = 0; i < 200 && !(await chainId(url)); i++) await new Promise((r) => setTimeout(r, 50));
    // without a pid file the port is someone else's: refuse
    await expect(startEmbeddedAnvil({ host: '127.0.0.1', port, chainId: 31337, logger })).rejects.toThrow(/already serves an RPC node/);
    mkdirSync(path.resolve('.run', 'anvil'), { recursive: true });
    writeFileSync(path.resolve('.run', 'anvil', `anvil-${port}.pid`), String(orphan.pid));
    const exited = new Promise((r) => orphan.once('exit', r));
    const node = await startEmbeddedAnvil({ host: '127.0.0.1', port, chainId: 31337, logger });
    await exited;
    expect(await chainId(node.rpcUrl)).toBe('0x7a69');
    await node.stop();
  });
});
