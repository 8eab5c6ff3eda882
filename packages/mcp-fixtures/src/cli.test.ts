/** The command line: option parsing, and the built binary as a process (one line with its URL, serving, a clean exit on SIGTERM). */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { cliOptions } from './cli';

describe('cliOptions', () => {
  it('reads flags, then MCP_FIXTURES_PORT / MCP_FIXTURES_BEARER, then the defaults', () => {
    expect(cliOptions([])).toEqual({ port: 4020, host: '127.0.0.1' });
    expect(cliOptions([], { MCP_FIXTURES_PORT: '4999', MCP_FIXTURES_BEARER: 'env' })).toEqual({ port: 4999, host: '127.0.0.1', bearer: 'env' });
    expect(cliOptions(['--port', '0', '--host', '::1', '--bearer', 'b'], { MCP_FIXTURES_PORT: '4999' })).toEqual({ port: 0, host: '::1', bearer: 'b' });
    expect(() => cliOptions(['--port', 'x'])).toThrow(/invalid port/);
    expect(() => cliOptions(['--port', '70000'])).toThrow(/invalid port/);
    expect(() => cliOptions(['--bogus'])).toThrow();
    expect(cliOptions(['--hostile', '--port', '0'])).toEqual({ port: 0, host: '127.0.0.1', hostile: true });
  });
});

const BIN = path.join(__dirname, '..', 'dist', 'cli.js');

describe('agw-mcp-fixtures (built)', () => {
  (existsSync(BIN) ? it : it.skip)('prints its URL, serves, and exits 0 on SIGTERM', async () => {
    const child = spawn(process.execPath, [BIN, '--port', '0', '--bearer', 'cli-token'], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const [line] = (await once(child.stdout!, 'data')) as [Buffer];
      const url = /listening on (http:\/\/\S+)/.exec(line.toString())?.[1];
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(await (await fetch(`${url}/control/calls`)).json()).toEqual([]);
      expect((await fetch(`${url}/secured/mcp`, { method: 'POST', body: '{}' })).status).toBe(401);
      child.kill('SIGTERM');
      const [code] = await once(child, 'exit');
      expect(code).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });

  (existsSync(BIN) ? it : it.skip)('--hostile runs a hostile upstream driven over /control/*', async () => {
    const child = spawn(process.execPath, [BIN, '--port', '0', '--hostile'], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const [line] = (await once(child.stdout!, 'data')) as [Buffer];
      const url = /listening on (http:\/\/\S+)/.exec(line.toString())?.[1];
      expect(await (await fetch(`${url}/control/state`)).json()).toMatchObject({ label: 'hostile', stats: { listings: 0 } });
      child.kill('SIGTERM');
      const [code] = await once(child, 'exit');
      expect(code).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
