/**
 * The event consumer of one managed session: reads the platform session's SSE stream, logs built-in tool
 * use as `mcp_observed` records, scores each for anomalies (auto-interrupting above the tenant's
 * threshold), brings the platform's confirmation requests to the approval queue and moves the session to
 * completed/failed from the platform's status events.
 *
 * Lossless reconnection, without duplicates: the platform's stream has no replay, so after (re)opening the
 * stream the consumer lists the session's events and processes those it has not processed yet (events up
 * to the persisted `last_event_id` count as processed), then follows the live stream, skipping ids it saw.
 * Records are idempotent besides (SessionRecorder derives the action id from the event id).
 * It stops when the session ends, when its lease is lost, or after SSE_TIMEOUT seconds without activity.
 */
import type { Logger } from '@agw/shared';
import { assessToolUse } from '../anomaly/anomaly-scorer';
import type { AgentPlatform, PlatformEvent } from '../platform/agent-platform';
import type { SessionRecorder } from '../sessions/session-recorder';
import type { SessionRepository, SessionRow } from '../sessions/session.repository';
import { isConfirmationRequest } from '../confirmations/tool-confirmations';
import { isObservedToolUse, transitionFor } from './platform-status';

export interface ConsumerDeps {
  platform: AgentPlatform;
  repo: SessionRepository;
  recorder: SessionRecorder;
  logger: Logger;
  /** the tenant's auto-interrupt threshold */
  threshold(tenantId: string): Promise<number>;
  /** interrupt on an anomaly (publishes anomaly.detected and session.interrupted) */
  onAnomaly(s: SessionRow, e: PlatformEvent, score: number, signals: string[]): Promise<void>;
  onEventProcessed?(): void;
  /** a tool use the platform holds for a confirmation (confirmations/tool-confirmations.ts) */
  onConfirmationRequest(s: SessionRow, e: PlatformEvent): Promise<void>;
  idleTimeoutMs: number;
  reconnectDelayMs: number;
}

export type ConsumerStopReason = 'session_ended' | 'lease_lost' | 'idle_timeout' | 'shutdown';

export class SessionStreamConsumer {
  private readonly seen = new Set<string>();
  private abort?: AbortController;
  private stopped: ConsumerStopReason | null = null;
  private idleTimer?: NodeJS.Timeout;
  private done!: Promise<void>;
  /** resolves the reconnect wait early */
  private wake?: () => void;
  eventsProcessed = 0;

  constructor(
    private readonly d: ConsumerDeps,
    private session: SessionRow,
    private readonly onStop: (id: string, reason: ConsumerStopReason) => void,
  ) {}

  get id(): string {
    return this.session.id;
  }

  start(): void {
    this.armIdleTimer();
    this.done = this.run().catch((e) => this.d.logger.error({ err: e, session_id: this.id }, 'session consumer crashed'));
  }

  /** Something happened in the session (a platform event, or a governed call seen on NATS). */
  noteActivity(): void {
    if (!this.stopped) this.armIdleTimer();
  }

  async stop(reason: ConsumerStopReason): Promise<void> {
    this.d.logger.debug({ session_id: this.id, reason, already: this.stopped }, 'session consumer stop requested');
    this.halt(reason);
    await this.done;
  }

  /** Stop now: the stream is aborted and a reconnect wait is cut short (the first reason counts). */
  private halt(reason: ConsumerStopReason): void {
    this.stopped ??= reason;
    clearTimeout(this.idleTimer);
    this.abort?.abort();
    this.wake?.();
  }

  private armIdleTimer(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      this.d.logger.info({ session_id: this.id, seconds: this.d.idleTimeoutMs / 1000 }, 'session stream idle: consumer stops (SSE_TIMEOUT)');
      void this.stop('idle_timeout');
    }, this.d.idleTimeoutMs);
    this.idleTimer.unref();
  }

  private async run(): Promise<void> {
    const platformId = this.session.anthropic_session_id as string;
    let delay = this.d.reconnectDelayMs;
    let lastId = this.session.last_event_id;
    while (!this.stopped) {
      this.abort = new AbortController();
      try {
        this.d.logger.debug({ session_id: this.id, last_event_id: lastId }, 'opening session stream');
        const live = await this.d.platform.openStream(platformId, { lastEventId: lastId, signal: this.abort.signal });
        await this.d.repo.consumerState(this.id, { consumer_status: 'connected', connected_since: new Date() });
        delay = this.d.reconnectDelayMs;
        // backfill what happened while no stream was open; events up to lastId were processed before
        const history = await this.d.platform.listEvents(platformId);
        const resumeAt = lastId ? history.findIndex((e) => e.id === lastId) : -1;
        this.d.logger.debug({ session_id: this.id, history: history.length, resume_at: resumeAt }, 'session stream open; backfilling');
        history.slice(0, resumeAt + 1).forEach((e) => this.seen.add(e.id));
        for (const e of history.slice(resumeAt + 1)) {
          if (this.stopped) break;
          lastId = (await this.process(e)) ?? lastId;
        }
        if (!this.stopped) {
          for await (const e of live) {
            lastId = (await this.process(e)) ?? lastId;
            if (this.stopped) break;
          }
        }
        if (!this.stopped) this.d.logger.warn({ session_id: this.id }, 'session stream ended; reconnecting');
      } catch (e) {
        if (this.stopped) break;
        const status = (e as { cause?: { status?: number } }).cause?.status;
        if (status === 404) {
          await this.d.repo.end(this.session.tenant_id, this.id, 'failed', { end_reason: 'platform: session not found' });
          this.halt('session_ended');
          break;
        }
        this.d.logger.warn({ session_id: this.id, reason: (e as Error).message }, 'session stream dropped; reconnecting');
      }
      if (this.stopped) break;
      await this.d.repo.consumerState(this.id, { consumer_status: 'reconnecting' }).catch(() => undefined);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, delay);
        this.wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
      this.wake = undefined;
      delay = Math.min(delay * 2, 10_000);
    }
    clearTimeout(this.idleTimer);
    this.onStop(this.id, this.stopped ?? 'shutdown');
  }

  /** Process one platform event once; returns its id when it was new. */
  private async process(e: PlatformEvent): Promise<string | undefined> {
    if (!e?.id || this.seen.has(e.id)) return undefined;
    this.noteActivity();
    let score = 0;
    if (isObservedToolUse(e)) {
      const name = String(e.name ?? 'unknown');
      const input = (e.input ?? {}) as Record<string, unknown>;
      const anomaly = assessToolUse(name, input);
      score = anomaly.score;
      await this.d.recorder.observed(this.session, { id: e.id, name, input }, anomaly);
      if (anomaly.signals.length && anomaly.score > (await this.d.threshold(this.session.tenant_id))) {
        await this.d.onAnomaly(this.session, e, anomaly.score, anomaly.signals.map((s) => s.id));
        this.halt('session_ended');
      }
    }
    // a failure here (policy or audit unreachable) leaves the event unprocessed: the stream is reopened and it comes back
    if (isConfirmationRequest(e)) await this.d.onConfirmationRequest(this.session, e);
    const t = transitionFor(e);
    if (t && !this.stopped) {
      await this.d.repo.end(this.session.tenant_id, this.id, t.to, { end_reason: t.reason });
      this.halt('session_ended');
    }
    this.seen.add(e.id);
    await this.d.repo.progress(this.id, e.id, score);
    this.eventsProcessed++;
    this.d.onEventProcessed?.();
    return e.id;
  }
}
