/**
 * Keeps the delivery log bounded: final deliveries (delivered or failed) older than the retention are
 * deleted with their attempts, in batches, once at start and then every hour. Any replica may run it (the
 * delete is idempotent); pending deliveries are never touched.
 */
import type { Logger } from '@agw/shared';
import type { DeliveryRepository } from './delivery.repository';

export class DeliveryRetention {
  private timer?: NodeJS.Timeout;
  private running?: Promise<number>;

  constructor(
    private readonly repo: Pick<DeliveryRepository, 'purgeCompletedBefore'>,
    private readonly retentionDays: number,
    private readonly logger: Logger,
    private readonly everyMs = 3_600_000,
  ) {}

  start(): void {
    void this.runOnce();
    this.timer = setInterval(() => void this.runOnce(), this.everyMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running?.catch(() => undefined);
  }

  /** Purge until nothing old is left; returns how many deliveries were deleted. */
  runOnce(): Promise<number> {
    this.running ??= (async () => {
      let total = 0;
      try {
        for (;;) {
          const n = await this.repo.purgeCompletedBefore(this.retentionDays);
          total += n;
          if (n === 0) break;
        }
        if (total) this.logger.info({ deleted: total, retention_days: this.retentionDays }, 'old webhook deliveries purged');
      } catch (e) {
        this.logger.warn({ err: e }, 'purging old webhook deliveries failed; will retry in an hour');
      } finally {
        this.running = undefined;
      }
      return total;
    })();
    return this.running;
  }
}
