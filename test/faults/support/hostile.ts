/**
 * The project's hostile MCP upstream (@agw/mcp-fixtures, `agw-mcp-fixtures --hostile`) as a process of its
 * own, driven over its /control/* endpoint (R9): building and sending megabytes of definitions and a
 * list_changed loop then costs the suite's process nothing, so the latencies it measures are the fleet's.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './env';

const CLI = path.join(ROOT, 'packages', 'mcp-fixtures', 'dist', 'cli.js');

export interface HostileProcess {
  /** `http://127.0.0.1:<port>`; the MCP endpoint is `<url>/mcp` */
  url: string;
  /** POST /control/<what> with a JSON body; the parsed answer */
  control(what: 'configure' | 'list-changed' | 'reset', body?: Record<string, unknown>): Promise<any>;
  /** GET /control/state: the configuration and the counts (stats.listings: reads of the tool list) */
  state(): Promise<{ stats: { listings: number; pages: number; listChangedSent: number; methods: Record<string, number> }; sessions: number }>;
  stop(): Promise<void>;
}

export async function startHostileProcess(): Promise<HostileProcess> {
  if (!existsSync(CLI)) throw new Error('packages/mcp-fixtures is not built: run `pnpm exec turbo run build` first');
  const child: ChildProcess = spawn(process.execPath, [CLI, '--hostile', '--port', '0', '--host', '127.0.0.1'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`hostile upstream did not start: ${out}`)), 15_000);
    child.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.once('exit', (code) => reject(new Error(`hostile upstream exited (${code}): ${out}`)));
  });
  child.removeAllListeners('exit');
  child.stdout!.resume();
  const json = async (res: Response) => {
    const text = await res.text();
    if (!res.ok) throw new Error(`hostile upstream control: ${res.status} ${text}`);
    return text ? JSON.parse(text) : undefined;
  };
  return {
    url,
    control: async (what, body = {}) => json(await fetch(`${url}/control/${what}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })),
    state: async () => json(await fetch(`${url}/control/state`)),
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        const t = setTimeout(() => (child.kill('SIGKILL'), resolve()), 5000);
        child.once('exit', () => (clearTimeout(t), resolve()));
        child.kill('SIGTERM');
      }),
  };
}
