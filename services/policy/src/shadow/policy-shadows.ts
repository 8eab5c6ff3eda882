/**
 * Shadow rollout of a candidate policy (docs/policy.md, "Shadow rollout"). While a tenant's shadow runs,
 * every governed call the live policy answered is also decided by the candidate, off the answer's path:
 * `offer` (called by PolicyEvaluation after the live decision) only queues the call; the queue is drained
 * on a later turn of the event loop into the shadow's evaluation thread (shadow-evaluator.ts), so neither
 * the answer nor the next call waits for the candidate. Each candidate decision is kept beside the live one
 * by action id (the audit record's action_id), and the shadow ends by itself after `max_calls` kept calls
 * or at `expires_at`. The queue is bounded: beyond `queueMax` waiting calls, a call is dropped and counted
 * (`dropped` in the report), never waited for.
 *
 * Start, promotion, discarding and the shadow's own end are control_plane records with a `policy.changed`
 * event (policy-change-recorder.ts); promotion activates the candidate through `TenantPolicies.set`, the
 * path of every policy change, tests gate and override included.
 */
import { ConflictError, InputError, type Logger } from '@agw/shared';
import type { PolicyChange, StoredPolicyContent, TenantPolicies } from '../bundles/tenant-policies';
import type { PolicyChangeRecorder } from '../changes/policy-change-recorder';
import type { ToolCallFacts } from '../decisions/policy-evaluation';
import { postgres } from '../stores/store-errors';
import type { CandidateEvaluator, ShadowJob } from './shadow-evaluator';
import { type ShadowDecisionRow, type ShadowFigures, type ShadowRepository, type StoredShadow, notRunning } from './shadow.repository';

/** Bounds of a shadow: a number of calls and a duration, each with a default and a maximum. */
export const SHADOW_BOUNDS = {
  defaultMaxCalls: 10_000,
  maxMaxCalls: 1_000_000,
  defaultSeconds: 24 * 3600,
  maxSeconds: 30 * 24 * 3600,
} as const;

export interface LiveDecision {
  decision: string;
  violations: string[];
  bundleRevision: string;
  evalMs: number;
}

export interface ShadowReport {
  status: 'none' | 'running' | 'ended' | 'promoted' | 'discarded';
  shadow?: StoredShadow;
  figures?: ShadowFigures;
  liveRevision: string;
}

interface Waiting {
  tenantId: string;
  actionId: string;
  call: ToolCallFacts;
  live: LiveDecision;
  behavioral: Record<string, unknown> | null;
  nowNs: bigint;
  at: Date;
}

export interface PolicyShadowsOptions {
  /** calls waiting for the candidate at most; more are dropped and counted */
  queueMax: number;
  /** calls per batch handed to the evaluation thread and kept in one transaction */
  batch?: number;
  /** how long a queued call waits for others to fill its batch at most (ms); a full batch goes at once */
  flushMs?: number;
  /** how long a replica trusts its knowledge of whether a tenant's shadow runs (a change message bounds it too) */
  cacheMs: number;
  /** tell every replica that the tenant's shadow started or ended (the `policy` tenant change on NATS) */
  onChanged?: (tenantId: string) => void;
  /** a failure after the answer (keeping a batch, recording a shadow's end): logged and counted */
  onFailed?: (e: unknown) => void;
  /** calls dropped because the queue was full */
  onDropped?: (n: number) => void;
}

type Known = { at: number; shadow: StoredShadow | null; loading?: Promise<StoredShadow | null> };

export class PolicyShadows {
  private readonly known = new Map<string, Known>();
  private queue: Waiting[] = [];
  private draining = false;
  private readonly dropped = new Map<string, number>();

  constructor(
    private readonly repo: ShadowRepository,
    private readonly policies: TenantPolicies,
    private readonly recorder: PolicyChangeRecorder,
    private readonly evaluator: CandidateEvaluator,
    private readonly logger: Logger,
    private readonly o: PolicyShadowsOptions,
  ) {}

  /** Drop what this replica knows of a tenant's shadow (a change message), or of every tenant's (undefined). */
  invalidate(tenantId: string | undefined): void {
    if (tenantId === undefined) this.known.clear();
    else this.known.delete(tenantId);
  }

  /**
   * A live decision to decide again under the tenant's running shadow, if one runs. Costs the caller a map
   * lookup (and, for a tenant whose shadow state is not known here, a queue entry); never throws, never waits.
   */
  offer(tenantId: string, actionId: string, call: ToolCallFacts, live: LiveDecision, behavioral: Record<string, unknown> | null, nowNs: bigint): void {
    const k = this.known.get(tenantId);
    if (k && !k.loading && k.shadow === null && Date.now() - k.at < this.o.cacheMs) return;
    if (this.queue.length >= this.o.queueMax) {
      if (k?.shadow) this.dropped.set(k.shadow.shadow_id, (this.dropped.get(k.shadow.shadow_id) ?? 0) + 1);
      this.o.onDropped?.(1);
      return;
    }
    this.queue.push({ tenantId, actionId, call, live, behavioral, nowNs, at: new Date() });
    if (this.draining) return;
    // a batch fills for flushMs (one evaluation message and one transaction for many calls), or goes when full
    if (this.queue.length >= (this.o.batch ?? 64) || !this.o.flushMs) {
      if (this.flushTimer) clearTimeout(this.flushTimer);
      this.flushTimer = undefined;
      this.draining = true;
      setImmediate(() => void this.drain());
    } else if (!this.flushTimer) {
      this.flushTimer = setTimeout(() => {
        this.flushTimer = undefined;
        if (this.draining) return;
        this.draining = true;
        void this.drain();
      }, this.o.flushMs);
      this.flushTimer.unref?.();
    }
  }

  private flushTimer: NodeJS.Timeout | undefined;

  /** Resolves once every queued call has been decided and kept (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.draining || this.queue.length) {
      if (!this.draining && this.flushTimer) {
        clearTimeout(this.flushTimer);
        this.flushTimer = undefined;
        this.draining = true;
        void this.drain();
      }
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  private async runningShadow(tenantId: string): Promise<StoredShadow | null> {
    const k = this.known.get(tenantId);
    if (k && Date.now() - k.at < this.o.cacheMs) return k.loading ?? k.shadow;
    const entry: Known = { at: Date.now(), shadow: null };
    entry.loading = this.repo.running(tenantId).then(
      (s) => {
        entry.shadow = s ?? null;
        entry.loading = undefined;
        return entry.shadow;
      },
      (e: unknown) => {
        if (this.known.get(tenantId) === entry) this.known.delete(tenantId);
        throw e;
      },
    );
    this.known.set(tenantId, entry);
    return entry.loading;
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length) {
        const taken = this.queue.splice(0, this.o.batch ?? 64);
        // one batch per shadow: group the taken calls by tenant, in arrival order
        const byTenant = new Map<string, Waiting[]>();
        for (const w of taken) byTenant.set(w.tenantId, [...(byTenant.get(w.tenantId) ?? []), w]);
        for (const [tenantId, calls] of byTenant) {
          try {
            await this.decide(tenantId, calls);
          } catch (e) {
            this.o.onFailed?.(e);
          }
        }
      }
    } finally {
      this.draining = false;
    }
  }

  private async decide(tenantId: string, calls: Waiting[]): Promise<void> {
    const shadow = await this.runningShadow(tenantId);
    if (!shadow) return;
    if (shadow.expires_at.getTime() <= Date.now()) return void (await this.endByItself(tenantId, shadow, 'expired'));
    const candidate: StoredPolicyContent = { policy_template: shadow.policy_template, policy_overrides: shadow.policy_overrides, custom_policy: shadow.custom_policy };
    const jobs: ShadowJob[] = calls.map((c) => ({ call: c.call, behavioral: c.behavioral, nowNs: c.nowNs.toString() }));
    const results = await this.evaluator.evaluate(shadow.shadow_id, candidate, jobs);
    const rows: ShadowDecisionRow[] = calls.map((c, i) => ({
      action_id: c.actionId,
      agent_id: c.call.agentId,
      tool: c.call.tool,
      live_decision: c.live.decision,
      live_violations: c.live.violations,
      live_revision: c.live.bundleRevision,
      live_eval_ms: c.live.evalMs,
      candidate_decision: results[i]!.decision,
      candidate_violations: results[i]!.violations,
      candidate_eval_ms: results[i]!.evalMs,
      differs: c.live.decision !== results[i]!.decision,
      decided_at: c.at,
    }));
    const dropped = this.dropped.get(shadow.shadow_id) ?? 0;
    this.dropped.delete(shadow.shadow_id);
    const kept = await this.repo.keep(tenantId, shadow.shadow_id, rows, dropped);
    if (kept.full) await this.endByItself(tenantId, shadow, 'max_calls');
    else if (kept.expired) await this.endByItself(tenantId, shadow, 'expired');
  }

  /** The shadow reached max_calls or expires_at: ended once (whichever replica gets there first) and recorded. */
  private async endByItself(tenantId: string, shadow: StoredShadow, reason: 'max_calls' | 'expired'): Promise<void> {
    const ended = await this.repo.end(tenantId, shadow.shadow_id, 'ended', reason);
    this.changed(tenantId);
    if (!ended) return;
    await this.recordEnd(tenantId, ended, { decision: 'shadow_ended', actor: 'policy-service', method: 'shadow.end', revision: ended.revision, reason });
  }

  /** The audit record of a shadow's end (`ended`: its row as it ended), with the figures it gathered. */
  private async recordEnd(tenantId: string, ended: StoredShadow, r: { decision: 'shadow_ended' | 'shadow_discarded' | 'shadow_promoted'; actor: string; method: string; revision: string; reason?: string }): Promise<void> {
    const f = await this.repo.figures(tenantId, ended.shadow_id, 0);
    await this.recorder.record(tenantId, {
      decision: r.decision,
      actor: r.actor,
      method: r.method,
      violations: differingRules(f),
      severity: 'none',
      revision: r.revision,
      details: { shadow_id: ended.shadow_id, ...(r.reason ? { reason: r.reason } : {}), ...summary(ended, f) },
    });
  }

  private changed(tenantId: string): void {
    this.known.delete(tenantId);
    this.o.onChanged?.(tenantId);
  }

  /** Puts `change` (a policy change over the live policy) in shadow; 409 when one runs already. */
  async start(tenantId: string, change: PolicyChange, bounds: { maxCalls?: number; durationSeconds?: number }, actor: string): Promise<ShadowReport> {
    const maxCalls = bounds.maxCalls || SHADOW_BOUNDS.defaultMaxCalls;
    const seconds = bounds.durationSeconds || SHADOW_BOUNDS.defaultSeconds;
    if (!Number.isInteger(maxCalls) || maxCalls < 1 || maxCalls > SHADOW_BOUNDS.maxMaxCalls) throw InputError.at(['max_calls'], `max_calls must be an integer from 1 to ${SHADOW_BOUNDS.maxMaxCalls}`, 'range');
    if (!Number.isInteger(seconds) || seconds < 1 || seconds > SHADOW_BOUNDS.maxSeconds) throw InputError.at(['duration_seconds'], `the shadow's duration must be from 1 s to ${SHADOW_BOUNDS.maxSeconds} s (30 days)`, 'range');
    const c = await this.policies.prepared(tenantId, change); // 422 as a PATCH of the policy would be
    const live = await this.policies.active(tenantId);
    const expiresAt = new Date(Date.now() + seconds * 1000);
    const shadow = await postgres(() =>
      this.repo
        .insert(tenantId, {
          shadow_id: crypto.randomUUID(),
          policy_template: c.template,
          policy_overrides: c.overrides,
          custom_policy: c.customPolicy,
          revision: c.bundle.revision,
          bundle_hash: c.bundle.hash,
          max_calls: maxCalls,
          started_by: actor,
          expires_at: expiresAt,
          source_revision: c.source?.revision ?? null,
          source_digest: c.source?.digest ?? null,
        })
        .catch((e: unknown) => {
          if ((e as { code?: string }).code === '23505') throw new ConflictError('A shadow runs already for this tenant: promote or discard it first (GET /api/policy/shadow shows it)');
          throw e;
        }),
    );
    this.changed(tenantId);
    await this.recorder.record(tenantId, {
      decision: 'shadow_started',
      actor,
      method: 'shadow.start',
      violations: [],
      severity: 'none',
      revision: shadow.revision,
      details: { shadow_id: shadow.shadow_id, policy_template: shadow.policy_template, live_revision: live.revision, max_calls: maxCalls, expires_at: expiresAt.toISOString() },
    });
    return this.report(tenantId);
  }

  /** The running shadow (ended first when its time is up), else the tenant's last one, with its figures. */
  async report(tenantId: string, samples = 20): Promise<ShadowReport> {
    let shadow = await postgres(() => this.repo.latest(tenantId));
    if (shadow?.status === 'running' && shadow.expires_at.getTime() <= Date.now()) {
      await this.endByItself(tenantId, shadow, 'expired');
      shadow = await postgres(() => this.repo.latest(tenantId));
    }
    const live = await this.policies.active(tenantId);
    if (!shadow) return { status: 'none', liveRevision: live.revision };
    return { status: shadow.status as ShadowReport['status'], shadow, figures: await postgres(() => this.repo.figures(tenantId, shadow.shadow_id, samples)), liveRevision: live.revision };
  }

  async discard(tenantId: string, actor: string): Promise<ShadowReport> {
    const running = await postgres(() => this.repo.running(tenantId));
    if (!running) throw notRunning();
    const ended = await postgres(() => this.repo.end(tenantId, running.shadow_id, 'discarded', 'discarded'));
    this.changed(tenantId);
    if (!ended) throw notRunning();
    await this.recordEnd(tenantId, ended, { decision: 'shadow_discarded', actor, method: 'shadow.discard', revision: ended.revision });
    return this.report(tenantId);
  }

  /**
   * Makes the running shadow's candidate the live policy (a new revision) through `TenantPolicies.set`: a
   * candidate whose tests fail is refused (422) unless `override` carries a note. The shadow ends `promoted`.
   */
  async promote(tenantId: string, actor: string, override?: { note: string }) {
    const running = await postgres(() => this.repo.running(tenantId));
    if (!running) throw notRunning();
    const activated = await this.policies.set(
      tenantId,
      {
        template: running.policy_template,
        overrides: running.policy_overrides,
        customPolicy: running.custom_policy ?? '',
        ...(running.source_digest ? { source: { revision: running.source_revision ?? '', digest: running.source_digest } } : {}),
      },
      { actor, method: 'shadow.promote', ...(override ? { overrideFailingTests: override } : {}) },
    );
    const ended = await postgres(() => this.repo.end(tenantId, running.shadow_id, 'promoted', 'promoted'));
    this.changed(tenantId);
    await this.recordEnd(tenantId, ended ?? running, { decision: 'shadow_promoted', actor, method: 'shadow.promote', revision: activated.revision });
    return activated;
  }
}

function differingRules(f: ShadowFigures): string[] {
  return [...new Set(f.rules.map((r) => r.rule))];
}

function summary(s: StoredShadow, f: ShadowFigures): Record<string, unknown> {
  return { calls: s.calls, differing: f.differing, dropped: s.dropped, transitions: f.transitions, started_by: s.started_by, started_at: s.started_at.toISOString() };
}
