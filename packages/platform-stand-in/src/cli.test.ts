/**
 * The command line: option parsing (flags over env fallbacks over defaults), and the built binary as a
 * process: one line with its URL, a working health check, a clean exit on SIGTERM.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { once } from 'node:events';
import { cliOptions } from './cli';

describe('cliOptions', () => {
  it('reads flags, then STAND_IN_PORT / STAND_IN_API_KEY, then the defaults', () => {
    expect(cliOptions([])).toEqual({ host: '127.0.0.1', port: 4010, apiKey: 'stand-in-key', demo: false });
    expect(cliOptions([], { STAND_IN_PORT: '4999', STAND_IN_API_KEY: 'env-key' })).toMatchObject({ port: 4999, apiKey: 'env-key' });
    expect(cliOptions(['--port', '0', '--host', '::1', '--api-key', 'k', '--demo', '--heartbeat-ms', '50'], { STAND_IN_PORT: '4999' })).toEqual({ host: '::1', port: 0, apiKey: 'k', demo: true, heartbeatMs: 50 });
    expect(() => cliOptions(['--port', 'x'])).toThrow(/invalid port/);
    expect(() => cliOptions(['--bogus'])).toThrow();
  });
});

const BIN = path.join(__dirname, '..', 'dist', 'cli.js');

describe('agw-platform-stand-in (built)', () => {
  (existsSync(BIN) ? it : it.skip)('prints its URL, serves, and exits 0 on SIGTERM', async () => {
    const child = spawn(process.execPath, [BIN, '--port', '0', '--api-key', 'k'], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const [line] = (await once(child.stdout!, 'data')) as [Buffer];
      const url = /listening on (http:\/\/\S+)/.exec(line.toString())?.[1];
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(await (await fetch(`${url}/_stand-in/health`)).json()).toMatchObject({ status: 'ok' });
      child.kill('SIGTERM');
      const [code] = await once(child, 'exit');
      expect(code).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
