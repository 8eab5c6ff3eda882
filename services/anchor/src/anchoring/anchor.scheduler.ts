/**
 * The hourly anchoring: a tick every `tickMs` anchors what is pending when nothing was anchored yet in
 * the current clock hour, so the fleet sends one transaction per hour for all tenants (a trigger may add
 * one). Every replica ticks; the advisory lock in AnchorBatcher lets one of them write.
 */
import type { Logger } from '@agw/shared';
import type { AnchorBatcher } from './anchor-batcher';
import type { AnchorRepository } from './anchor.repository';

export class AnchorScheduler {
  private timer?: NodeJS.Timeout;
  private running: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly batcher: AnchorBatcher,
    private readonly repo: AnchorRepository,
    private readonly logger: Logger,
    private readonly tickMs: number,
  ) {}

  async tick(now = new Date()): Promise<void> {
    const s = await this.repo.statsAcrossTenants();
    const hourStart = Math.floor(now.getTime() / 3_600_000) * 3_600_000;
    if (s.pending === 0 || (s.last_anchor_hour_start !== null && s.last_anchor_hour_start >= hourStart)) return;
    await this.batcher.run({ wait: false });
  }

  start(): void {
    const tick = () => {
      this.running = this.tick().catch((e: unknown) => this.logger.error({ err: e }, 'scheduled anchoring failed; the heads stay pending'));
    };
    this.timer = setInterval(tick, this.tickMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }
}
