/**
 * A sweep the gateway runs every so often (the approval expiry, the OAuth purge): one run at a time (a tick
 * while one is in flight is skipped), a failure logged as a warning and tried again at the next tick, and
 * `stop()` waits for the run in flight, so a shutdown never cuts one short.
 */
import type { Logger } from '@agw/shared';

export class PeriodicSweep {
  private timer?: NodeJS.Timeout;
  private running?: Promise<unknown>;

  constructor(
    /** names the sweep in its failure's log line */
    private readonly name: string,
    private readonly run: () => Promise<unknown>,
    private readonly logger: Logger,
  ) {}

  /** Runs the sweep every `everyMs` (0: never); a second start is ignored. */
  start(everyMs: number): void {
    if (this.timer || everyMs <= 0) return;
    this.timer = setInterval(() => {
      if (this.running) return;
      this.running = this.run()
        .catch((e) => this.logger.warn({ err: e }, `${this.name} failed`))
        .finally(() => (this.running = undefined));
    }, everyMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
