/**
 * Queued actions nobody decided in time become `expired` (spec: "Expiry or timeout of queued actions: not
 * shown"; the project's choice in docs/auth.md): each gets a `control_plane` audit record (decision `deny`,
 * `details.approval: "expired"`) and an `expired` decision event, which the webhook service delivers as
 * `action.expired`. The time comes from an injected clock, so tests set it explicitly; the gateway sweeps
 * every `APPROVAL_SWEEP_MS` with the system clock, and a decision arriving after the time expires the
 * action on the spot (approval-queue.ts). A record that cannot be appended (audit down) leaves the action
 * pending until the next sweep: no action is expired without its record.
 */
import { type ApprovalBinding, type ApprovalRepository, type ApprovalRow, type Conn, type Logger, humanDecisionRecord } from '@agw/shared';
import type { DecisionRecorder } from '../pipeline/decision-recorder';
import { PeriodicSweep } from '../periodic-sweep';
import { type Clock, UNKNOWN_REVISION, systemClock } from './approval-queue';

export class ApprovalExpiry {
  private readonly periodic: PeriodicSweep;

  constructor(
    private readonly approvals: ApprovalRepository,
    private readonly recorder: DecisionRecorder,
    private readonly logger: Logger,
    private readonly clock: Clock = systemClock,
    private readonly batch = 200,
  ) {
    this.periodic = new PeriodicSweep(
      'approval expiry sweep',
      async () => {
        const rows = await this.sweep();
        if (rows.length) this.logger.info({ expired: rows.length }, 'queued actions expired');
      },
      logger,
    );
  }

  /** Expire every action due at the clock's time (or only the given one); resolves to the expired rows. */
  async sweep(only?: { tenantId: string; actionId: string }): Promise<ApprovalRow[]> {
    const now = this.clock();
    return this.approvals.expireDue(
      now,
      this.batch,
      async (row, trx) => {
        try {
          await this.record(row, now, trx);
          return true;
        } catch (e) {
          this.logger.warn({ err: e, tenantId: row.tenant_id, action_id: row.action_id }, 'could not record an approval expiry: the action stays pending until the next sweep');
          return false;
        }
      },
      only,
    );
  }

  expireNow = async (tenantId: string, actionId: string): Promise<void> => {
    await this.sweep({ tenantId, actionId });
  };

  start(everyMs: number): void {
    this.periodic.start(everyMs);
  }

  stop(): Promise<void> {
    return this.periodic.stop();
  }

  /**
   * `trx`: the sweep's transaction (the expiry lock and the due rows). The record's read of the tenant's
   * settings goes through it: read from the pool, concurrent sweeps (every late decision runs one) could
   * hold every pooled connection, each waiting for the lock, while its holder waited for one more.
   */
  private async record(row: ApprovalRow, now: Date, trx: Conn): Promise<void> {
    const binding: ApprovalBinding = {
      params_sha256: row.params_sha256 ?? UNKNOWN_REVISION,
      evaluated_bundle_revision: row.bundle_revision ?? UNKNOWN_REVISION,
      bundle_revision: row.bundle_revision ?? UNKNOWN_REVISION,
    };
    await this.recorder.record(
      row.tenant_id,
      humanDecisionRecord(row, {
        decision: 'deny',
        details: {
          approval: 'expired',
          decided_by: 'system:expiry',
          queued_at: row.queued_at.toISOString(),
          expires_at: (row.expires_at ?? now).toISOString(),
          approval_binding: binding,
        },
        requested_at: now.toISOString(),
      }),
      'expired',
      { conn: trx },
    );
  }
}
