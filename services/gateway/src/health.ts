/**
 * GET /api/health: the gateway's view of the fleet. Stores are pinged; services are asked over their
 * gRPC channel (ready within a short deadline). Blockchain and Merkle fields come from the features that
 * own them through `extraChecks` and say `not_configured` until those are wired.
 */
import { type Bus, type Db, pingNats, pingPostgres, type Redis, runChecks } from '@agw/shared';
import type { Client } from '@grpc/grpc-js';

export type HealthExtra = () => Promise<Record<string, unknown>>;

export class HealthService {
  private readonly extras: Record<string, HealthExtra> = {};

  constructor(
    private readonly d: { db: Db; redis: Redis; bus: Bus; services: Record<string, Client> },
  ) {}

  /** A feature adds its own section (e.g. `blockchain`, `merkle`). */
  addSection(name: string, section: HealthExtra): void {
    this.extras[name] = section;
  }

  async report(): Promise<Record<string, unknown>> {
    const stores = await runChecks({
      postgres: () => pingPostgres(this.d.db),
      redis: async () => {
        if ((await this.d.redis.ping()) !== 'PONG') throw new Error('no PONG');
      },
      nats: () => pingNats(this.d.bus),
    });
    const services = await runChecks(
      Object.fromEntries(
        Object.entries(this.d.services).map(([name, client]) => [
          name,
          () => new Promise<void>((resolve, reject) => client.waitForReady(Date.now() + 700, (err?: Error) => (err ? reject(new Error('unreachable')) : resolve()))),
        ]),
      ),
    );
    const sections: Record<string, unknown> = { blockchain: { status: 'not_configured' }, merkle: { status: 'not_configured' } };
    for (const [name, fn] of Object.entries(this.extras)) {
      sections[name] = await fn().catch((e: unknown) => ({ status: 'error', error: e instanceof Error ? e.message : String(e) }));
    }
    const storesOk = Object.values(stores).every((v) => v === 'ok');
    const servicesOk = Object.values(services).every((v) => v === 'ok');
    return {
      status: storesOk && servicesOk ? 'healthy' : storesOk ? 'degraded' : 'unhealthy',
      redis: stores.redis,
      postgres: stores.postgres,
      nats: stores.nats,
      services,
      ...sections,
      checked_at: new Date().toISOString(),
    };
  }
}
