#!/usr/bin/env node
/**
 * agw-mcp-fixtures [--port 4020] [--host 127.0.0.1] [--bearer TOKEN] [--hostile] (env fallbacks
 * MCP_FIXTURES_PORT, MCP_FIXTURES_BEARER): runs the fixture servers (with --hostile: one hostile upstream at
 * /mcp, driven over /control/*, hostile-server.ts), prints one line with the URL, exits cleanly on SIGTERM /
 * SIGINT.
 */
import { parseArgs } from 'node:util';
import { type FixtureOptions, startFixtures } from './fixture-server';
import { startHostileUpstream } from './hostile-server';

export const DEFAULT_PORT = 4020;

/** The fixture options of a command line (argv without node and the script) and an environment. */
export function cliOptions(argv: string[], env: NodeJS.ProcessEnv = {}): FixtureOptions & { hostile?: true } {
  const { values } = parseArgs({ args: argv, options: { port: { type: 'string' }, host: { type: 'string' }, bearer: { type: 'string' }, hostile: { type: 'boolean' } }, strict: true });
  const raw = values.port ?? env.MCP_FIXTURES_PORT ?? String(DEFAULT_PORT);
  const port = /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!(port >= 0 && port <= 65535)) throw new Error(`invalid port ${raw}`);
  const bearer = values.bearer ?? env.MCP_FIXTURES_BEARER;
  return { port, host: values.host ?? '127.0.0.1', ...(bearer ? { bearer } : {}), ...(values.hostile ? { hostile: true as const } : {}) };
}

async function main(): Promise<void> {
  const o = cliOptions(process.argv.slice(2), process.env);
  if (o.hostile) {
    const up = await startHostileUpstream({ port: o.port, host: o.host, ...(o.bearer ? { auth: { bearer: o.bearer, oauth: true } } : {}) });
    console.log(`MCP hostile upstream listening on ${up.url} (/mcp; /control/state, /control/configure, /control/list-changed, /control/reset; /oauth/token)`);
    const stop = () => void up.close().then(() => process.exit(0));
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
    return;
  }
  const fx = await startFixtures(o);
  console.log(
    `MCP fixtures listening on ${fx.url} (/mutable/mcp, /secured/mcp, /huge/mcp, /silent/mcp, /endless/mcp, /malformed/mcp, /garbage/mcp, /many/mcp, /poisoned/mcp, /legacy/sse; /control/*, /oauth/token)`,
  );
  const stop = () => void fx.close().then(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

if (require.main === module) {
  main().catch((e: unknown) => {
    console.error(`MCP fixtures failed to start: ${(e as Error).message}`);
    process.exit(1);
  });
}
