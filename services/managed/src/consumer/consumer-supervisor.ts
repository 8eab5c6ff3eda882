/**
 * Runs this replica's session consumers and makes sure every active session has exactly one, fleet-wide:
 * a consumer runs only while its replica holds the session's lease in Postgres (managed_sessions
 * .consumer_owner / consumer_lease_until). Every tick it renews its leases (a consumer whose lease was lost
 * or whose session ended stops), claims active sessions whose lease is free or expired (a restarted or
 * crashed replica's sessions are resumed by whoever claims them first), and interrupts sessions past their
 * max_session_hours. On shutdown it releases its leases so another replica resumes at once.
 */
import type { Logger } from '@agw/shared';
import type { SessionRepository, SessionRow } from '../sessions/session.repository';
import { type ConsumerDeps, type ConsumerStopReason, SessionStreamConsumer } from './session-stream.consumer';

export interface SupervisorOptions {
  owner: string;
  leaseSeconds: number;
  /** interrupt sessions past their max_session_hours */
  expire(s: SessionRow): Promise<void>;
}

export class ConsumerSupervisor {
  private readonly consumers = new Map<string, SessionStreamConsumer>();
  private timer?: NodeJS.Timeout;
  private ticking = false;
  private closing = false;

  constructor(
    private readonly repo: SessionRepository,
    private readonly deps: ConsumerDeps,
    private readonly o: SupervisorOptions,
    private readonly logger: Logger,
  ) {}

  get size(): number {
    return this.consumers.size;
  }

  start(): void {
    void this.tick();
    this.timer = setInterval(() => void this.tick(), Math.max(1000, (this.o.leaseSeconds * 1000) / 3));
    this.timer.unref();
  }

  /** Attach a consumer to an active session, if this replica can take its lease. */
  async attach(s: SessionRow): Promise<boolean> {
    if (this.closing || this.consumers.has(s.id) || !s.anthropic_session_id) return this.consumers.has(s.id);
    const claimed = await this.repo.claim(s.id, this.o.owner, this.o.leaseSeconds);
    if (!claimed || this.consumers.has(s.id)) return this.consumers.has(s.id);
    const c = new SessionStreamConsumer(this.deps, claimed, (id, reason) => void this.onStopped(id, reason));
    this.consumers.set(s.id, c);
    c.start();
    this.logger.info({ session_id: s.id, tenant_id: s.tenant_id }, 'session consumer attached');
    return true;
  }

  /**
   * A governed call of this session was decided (seen on NATS): activity for its consumer here, or, for a
   * consumer that had stopped idle, a reason to come back (when no other replica holds the session).
   */
  async onSessionActivity(tenantId: string, sessionId: string): Promise<void> {
    const c = this.consumers.get(sessionId);
    if (c) return c.noteActivity();
    await this.repo.touch(tenantId, sessionId);
    const s = await this.repo.get(tenantId, sessionId);
    if (s?.status === 'active' && s.consumer_status === 'idle_timeout') await this.attach(s);
  }

  async detach(sessionId: string, reason: ConsumerStopReason): Promise<void> {
    await this.consumers.get(sessionId)?.stop(reason);
  }

  async close(): Promise<void> {
    this.closing = true;
    if (this.timer) clearInterval(this.timer);
    await Promise.all([...this.consumers.values()].map((c) => c.stop('shutdown')));
  }

  private async onStopped(id: string, reason: ConsumerStopReason): Promise<void> {
    this.consumers.delete(id);
    const status = { session_ended: 'stopped', lease_lost: 'moved', idle_timeout: 'idle_timeout', shutdown: 'pending' }[reason];
    // shutdown: 'pending' lets another replica resume at once
    await this.repo.release(this.o.owner, id, status).catch((e) => this.logger.warn({ err: e, session_id: id }, 'could not release a session lease'));
    this.logger.info({ session_id: id, reason }, 'session consumer stopped');
  }

  private async tick(): Promise<void> {
    if (this.ticking || this.closing) return;
    this.ticking = true;
    try {
      const held = await this.repo.renew(this.o.owner, [...this.consumers.keys()], this.o.leaseSeconds);
      for (const id of this.consumers.keys()) if (!held.includes(id)) void this.detach(id, 'lease_lost');
      for (const s of await this.repo.expired()) await this.o.expire(s).catch((e) => this.logger.warn({ err: e, session_id: s.id }, 'could not end an expired session'));
      for (const s of await this.repo.orphans(this.o.owner)) await this.attach(s);
    } catch (e) {
      this.logger.warn({ reason: (e as Error).message }, 'consumer supervision pass failed');
    } finally {
      this.ticking = false;
    }
  }
}
