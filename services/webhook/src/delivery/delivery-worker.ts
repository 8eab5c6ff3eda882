/**
 * Runs due deliveries. Rows are claimed from Postgres (FOR UPDATE SKIP LOCKED plus a lease on
 * next_attempt_at), so replicas never attempt the same delivery at once and a retry survives a restart.
 * A replica wakes when a new event was enqueued here (`kick`), when one of its own retries falls due
 * (a timer at the exact delay), and every `pollMs` for work enqueued or left by other replicas.
 */
import { type Logger, traceHooks } from '@agw/shared';
import type { WebhookMetrics } from '../metrics';
import { type HttpsSender, type SendResult } from '../target/https-sender';
import type { DeliveryRepository, DeliveryRow } from './delivery.repository';
import { type NextStep, nextStep } from './retry-schedule';
import type { TenantWebhookRepository } from './tenant-webhook.repository';
import type { WebhookSecrets } from './webhook-secrets';
import { SIGNATURE_HEADER, signBody } from './webhook.signer';

export interface DeliveryWorkerOptions {
  /** attempts in flight on this replica */
  concurrency: number;
  /** attempts in flight on this replica for one tenant (a slow receiver cannot starve the others) */
  perTenant: number;
  pollMs: number;
  /** how long a claimed row stays hidden from other replicas; longer than one attempt can take */
  leaseMs: number;
}

export interface DeliveryWorkerDeps {
  repo: DeliveryRepository;
  tenants: TenantWebhookRepository;
  sender: Pick<HttpsSender, 'send'>;
  /** opens the tenant's sealed secret (through the vault) */
  secrets: Pick<WebhookSecrets, 'of'>;
  metrics: WebhookMetrics;
  logger: Logger;
}

export class DeliveryWorker {
  private running = false;
  private ticking = false;
  private again = false;
  private inFlight = 0;
  private readonly inFlightByTenant = new Map<string, number>();
  private poll?: NodeJS.Timeout;
  private readonly wakeTimers = new Set<NodeJS.Timeout>();
  private readonly attemptsInFlight = new Set<Promise<unknown>>();

  constructor(
    private readonly d: DeliveryWorkerDeps,
    private readonly o: DeliveryWorkerOptions,
  ) {}

  start(): void {
    this.running = true;
    this.poll = setInterval(() => this.kick(), this.o.pollMs);
    this.kick();
  }

  /** Let in-flight attempts finish (each is bounded by the attempt timeout); claim nothing new. */
  async stop(): Promise<void> {
    this.running = false;
    clearInterval(this.poll);
    for (const t of this.wakeTimers) clearTimeout(t);
    this.wakeTimers.clear();
    await Promise.allSettled([...this.attemptsInFlight]);
  }

  /** Look for due deliveries now (coalesced: a kick during a claim makes the claim loop go round again). */
  kick(): void {
    if (!this.running) return;
    if (this.ticking) {
      this.again = true;
      return;
    }
    void this.tick();
  }

  private async tick(): Promise<void> {
    this.ticking = true;
    try {
      do {
        this.again = false;
        const capacity = this.o.concurrency - this.inFlight;
        if (capacity <= 0) break;
        const skipTenants = [...this.inFlightByTenant].filter(([, n]) => n >= this.o.perTenant).map(([t]) => t);
        const rows = await this.d.repo.claimDue(capacity, this.o.leaseMs, { perTenant: this.o.perTenant, skipTenants });
        for (const row of rows) {
          if ((this.inFlightByTenant.get(row.tenant_id) ?? 0) >= this.o.perTenant) await this.d.repo.release(row.tenant_id, row.id);
          else this.launch(row);
        }
        if (rows.length === capacity) this.again = true;
      } while (this.again && this.running);
    } catch (e) {
      this.d.logger.warn({ err: e }, 'claiming due webhook deliveries failed; retrying at the next poll');
    } finally {
      this.ticking = false;
    }
  }

  private launch(row: DeliveryRow): void {
    this.inFlight++;
    this.inFlightByTenant.set(row.tenant_id, (this.inFlightByTenant.get(row.tenant_id) ?? 0) + 1);
    const p = this.attempt(row)
      .catch((e: unknown) => {
        // the lease expires and the delivery is attempted again (at-least-once)
        this.d.logger.error({ err: e, delivery_id: row.id, tenant_id: row.tenant_id }, 'webhook attempt could not be recorded');
      })
      .finally(() => {
        this.inFlight--;
        const n = (this.inFlightByTenant.get(row.tenant_id) ?? 1) - 1;
        if (n > 0) this.inFlightByTenant.set(row.tenant_id, n);
        else this.inFlightByTenant.delete(row.tenant_id);
        this.attemptsInFlight.delete(p);
        this.kick();
      });
    this.attemptsInFlight.add(p);
  }

  /**
   * One attempt of a claimed delivery: sign with the tenant's current secret, send, log the attempt and
   * schedule the next one (2, 4, 8 s) or finish as delivered/failed.
   */
  async attempt(row: DeliveryRow): Promise<{ result: SendResult; next: NextStep }> {
    const attempt = row.attempts + 1;
    const tenant = await this.d.tenants.get(row.tenant_id);
    const signAndSend = async (): Promise<SendResult> => {
      let secret: string | null = null;
      let secretError = 'the tenant has no webhook_secret';
      try {
        secret = await this.d.secrets.of(row.tenant_id, tenant);
      } catch (e) {
        // counted as a failed attempt and retried on the schedule (the vault may be back by then)
        secretError = `the webhook secret could not be unsealed: ${e instanceof Error ? e.message : String(e)}`;
      }
      return secret
        ? this.d.sender.send({
            url: row.url,
            body: row.body,
            headers: {
              [SIGNATURE_HEADER]: signBody(secret, row.body),
              'X-Service-Event': row.event,
              'X-Service-Delivery': row.id,
              'X-Service-Attempt': String(attempt),
            },
          })
        : { outcome: 'error', statusCode: null, error: secretError, startedAt: new Date(), durationMs: 0 };
    };
    const tracing = traceHooks.current; // tracing on: the attempt continues the trace of the call that made the event
    const result = await (tracing ? tracing.within(row.event_id, 'webhook deliver', { 'agw.webhook.attempt': attempt, 'agw.webhook.event': row.event }, signAndSend) : signAndSend());
    const next = nextStep(attempt, result.outcome === 'success');
    await this.d.repo.recordAttempt(row.tenant_id, row.id, { attempt, ...result }, next);

    const { metrics, logger } = this.d;
    metrics.attempts.inc({ outcome: result.outcome });
    metrics.attemptDuration.observe({ outcome: result.outcome }, result.durationMs / 1000);
    const fields = {
      tenant_id: row.tenant_id,
      delivery_id: row.id,
      event: row.event,
      attempt,
      outcome: result.outcome,
      status_code: result.statusCode,
      error: result.error,
      duration_ms: result.durationMs,
    };
    if (next.status === 'delivered') {
      metrics.deliveries.inc({ status: 'delivered' });
      logger.info(fields, 'webhook delivered');
    } else if (next.status === 'failed') {
      metrics.deliveries.inc({ status: 'failed' });
      logger.error(fields, 'webhook delivery failed after the last attempt');
    } else {
      logger.warn({ ...fields, retry_in_ms: next.delayMs }, 'webhook attempt failed; will retry');
      this.wakeIn(next.delayMs);
    }
    return { result, next };
  }

  private wakeIn(ms: number): void {
    if (!this.running) return;
    const t = setTimeout(() => {
      this.wakeTimers.delete(t);
      this.kick();
    }, ms + 5);
    this.wakeTimers.add(t);
  }
}
