/**
 * The one way to start a service: `runService` loads nothing by itself; the service's `main.ts` passes
 * a `start` function that builds its clients and servers and returns what to close. This handles the
 * ops server, SIGTERM/SIGINT (drain, then close in reverse order) and fatal start-up errors (one readable
 * line, exit 1, no stack trace for a known cause such as an unreachable store).
 */
import type { Registry } from 'prom-client';
import type { Logger } from './logger';
import { type ReadinessCheck, startOpsServer } from './ops-server';

export interface StartedService {
  /** closed in reverse order on shutdown */
  closers: Array<() => Promise<void> | void>;
  checks: Record<string, ReadinessCheck>;
}

export interface ServiceDefinition {
  name: string;
  logger: Logger;
  registry: Registry;
  opsHost: string;
  opsPort: number;
  start: () => Promise<StartedService>;
}

export function runService(def: ServiceDefinition): void {
  const { logger } = def;
  let closers: StartedService['closers'] = [];
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, `${def.name} stopping`);
    for (const c of [...closers].reverse()) {
      try {
        await c();
      } catch (e) {
        logger.warn({ err: e }, 'error while closing');
      }
    }
    logger.info(`${def.name} stopped`);
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  void (async () => {
    try {
      const started = await def.start();
      closers = started.closers;
      const ops = await startOpsServer({ host: def.opsHost, port: def.opsPort, registry: def.registry, checks: started.checks });
      closers.unshift(() => ops.close());
      logger.info({ opsPort: ops.port }, `${def.name} started`);
    } catch (e) {
      logger.fatal({ err: e }, `${def.name} failed to start: ${describeStartError(e)}`);
      process.exit(1);
    }
  })();
}

/** A readable cause for the usual start-up failures. */
export function describeStartError(e: unknown): string {
  const err = e as { code?: string; message?: string; address?: string; port?: number };
  if (err?.code === 'ECONNREFUSED') return `connection refused at ${err.address ?? '?'}:${err.port ?? '?'}`;
  if (err?.code === 'EADDRINUSE') return `port ${err.port ?? ''} is already in use`;
  return err?.message ?? String(e);
}
