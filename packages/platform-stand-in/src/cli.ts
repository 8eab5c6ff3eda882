#!/usr/bin/env node
/**
 * agw-platform-stand-in [--port 4010] [--host 127.0.0.1] [--api-key KEY] [--demo] [--heartbeat-ms N]
 * (env fallbacks STAND_IN_PORT, STAND_IN_API_KEY). Prints one line with its URL; exits cleanly on
 * SIGTERM / SIGINT.
 */
import { parseArgs } from 'node:util';
import { type StandInOptions, startPlatformStandIn } from './stand-in.server';

export const DEFAULT_PORT = 4010;
export const DEFAULT_API_KEY = 'stand-in-key';

/** The server options of a command line (argv without node and the script) and an environment. */
export function cliOptions(argv: string[], env: NodeJS.ProcessEnv = {}): StandInOptions {
  const { values } = parseArgs({
    args: argv,
    options: { port: { type: 'string' }, host: { type: 'string' }, 'api-key': { type: 'string' }, demo: { type: 'boolean' }, 'heartbeat-ms': { type: 'string' } },
    strict: true,
  });
  const port = Number(values.port ?? env.STAND_IN_PORT ?? DEFAULT_PORT);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`invalid port ${values.port ?? env.STAND_IN_PORT}`);
  const heartbeatMs = values['heartbeat-ms'] === undefined ? undefined : Number(values['heartbeat-ms']);
  if (heartbeatMs !== undefined && !(heartbeatMs > 0)) throw new Error(`invalid --heartbeat-ms ${values['heartbeat-ms']}`);
  return { host: values.host ?? '127.0.0.1', port, apiKey: values['api-key'] ?? env.STAND_IN_API_KEY ?? DEFAULT_API_KEY, demo: values.demo ?? false, ...(heartbeatMs ? { heartbeatMs } : {}) };
}

async function main(): Promise<void> {
  const options = cliOptions(process.argv.slice(2), process.env);
  const standIn = await startPlatformStandIn(options);
  console.log(`agent platform stand-in listening on ${standIn.url}${options.demo ? ' (demo sessions)' : ''}`);
  const stop = () => void standIn.close().then(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

if (require.main === module) {
  main().catch((e: unknown) => {
    console.error(`platform stand-in failed to start: ${(e as Error).message}`);
    process.exit(1);
  });
}
