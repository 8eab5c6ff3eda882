#!/usr/bin/env node
/**
 * agw-platform-stand-in [--port 4010] [--host 127.0.0.1] [--api-key KEY] [--demo]
 * (env fallbacks STAND_IN_PORT, STAND_IN_API_KEY). Prints one line with its URL; stops on SIGTERM/SIGINT.
 */
import { startPlatformStandIn } from './stand-in';

const args = process.argv.slice(2);
const opt = (name: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};

void (async () => {
  const s = await startPlatformStandIn({
    host: opt('host') ?? '127.0.0.1',
    port: Number(opt('port') ?? process.env.STAND_IN_PORT ?? 4010),
    apiKey: opt('api-key') ?? process.env.STAND_IN_API_KEY ?? 'stand-in-key',
    demo: args.includes('--demo'),
  });
  console.log(`agent platform stand-in listening on ${s.url}${args.includes('--demo') ? ' (demo sessions)' : ''}`);
  const stop = () => void s.close().then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
})().catch((e) => {
  console.error(`platform stand-in failed to start: ${(e as Error).message}`);
  process.exit(1);
});
