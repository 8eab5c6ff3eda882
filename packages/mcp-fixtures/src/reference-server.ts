/**
 * The reference MCP server `@modelcontextprotocol/server-everything` (npm), the real third-party upstream of
 * the federation tests, as a child process on a free loopback port: ready once its port answers.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import net from 'node:net';
import { freeLoopbackPort } from '@agw/shared';

export interface ReferenceServer {
  /** the MCP endpoint: `/mcp` (Streamable HTTP) or `/sse` (the legacy HTTP+SSE transport) */
  url: string;
  port: number;
  child: ChildProcess;
  close(): Promise<void>;
}

const portAnswers = (port: number) =>
  new Promise<boolean>((r) => {
    const s = net.connect(port, '127.0.0.1', () => (s.destroy(), r(true)));
    s.on('error', () => r(false));
  });

/** Starts server-everything over `transport` and resolves once it listens (30 s at most). */
export async function startServerEverything(o: { transport?: 'streamableHttp' | 'sse' } = {}): Promise<ReferenceServer> {
  const transport = o.transport ?? 'streamableHttp';
  const port = await freeLoopbackPort();
  const entry = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
  const child = spawn(process.execPath, [entry, transport], { env: { ...process.env, PORT: String(port) }, stdio: 'ignore' });
  const until = Date.now() + 30_000;
  while (!(await portAnswers(port))) {
    if (Date.now() > until || child.exitCode !== null) {
      child.kill('SIGKILL');
      throw new Error(`server-everything (${transport}) did not start on port ${port}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const close = () =>
    new Promise<void>((r) => {
      if (child.exitCode !== null) return r();
      child.once('exit', () => r());
      child.kill('SIGTERM');
    });
  return { url: `http://127.0.0.1:${port}/${transport === 'sse' ? 'sse' : 'mcp'}`, port, child, close };
}
