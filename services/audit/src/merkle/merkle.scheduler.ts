/**
 * The hourly build inside the audit service: a tick every `tickMs` builds tree heads for tenants whose
 * latest head is from an earlier clock hour (so one head per tenant per hour). Every replica ticks; the
 * advisory lock in TreeBuilder lets exactly one of them build.
 */
import type { Logger } from '@agw/shared';
import type { TreeBuilder } from './tree-builder';

export class MerkleScheduler {
  private timer?: NodeJS.Timeout;
  private running: Promise<unknown> = Promise.resolve();
  lastRunAt?: Date;

  constructor(
    private readonly builder: TreeBuilder,
    private readonly logger: Logger,
    private readonly tickMs: number,
  ) {}

  start(): void {
    const tick = () => {
      this.running = this.builder
        .buildPending({ builtBy: 'schedule', wait: false, oncePerHour: true })
        .then(() => {
          this.lastRunAt = new Date();
        })
        .catch((e: unknown) => this.logger.error({ err: e }, 'scheduled Merkle build failed'));
    };
    this.timer = setInterval(tick, this.tickMs);
    this.timer.unref();
    setTimeout(tick, 1000).unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }
}
