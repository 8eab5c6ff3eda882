/**
 * Replay: re-evaluate stored decisions under the tenant's current policy (or a candidate not saved yet), with the original input (params
 * revealed from their stored envelopes, the behavioral data of the decision, the decision time) so only
 * the policy differs. Reports original and replay decisions and whether they agree.
 */
import { InputError } from '@agw/shared';
import type { PolicyChange, TenantPolicies } from '../bundles/tenant-policies';
import type { DecisionRepository, StoredDecision } from '../decisions/decision.repository';
import { type ToolCallFacts, twoPass } from '../decisions/policy-evaluation';
import { postgres } from '../stores/store-errors';
import type { ParamsRevealer } from './params-revealer';

export interface ReplayResult {
  action_id: string;
  found: boolean;
  tool: string;
  original_decision: string;
  replay_decision: string;
  consistent: boolean;
  original_violations: string[];
  replay_violations: string[];
  original_bundle_revision: string;
  replay_bundle_revision: string;
  erased_subjects: string[];
}

export const MAX_REPLAY = 1000;

export class ReplayService {
  constructor(
    private readonly policies: TenantPolicies,
    private readonly decisions: DecisionRepository,
    private readonly revealer: ParamsRevealer,
  ) {}

  /** Under the tenant's active policy, or under `candidate` (a change not saved: what it would decide). */
  async replay(tenantId: string, actionIds: string[], candidate?: PolicyChange): Promise<ReplayResult[]> {
    if (actionIds.length > MAX_REPLAY) throw InputError.field('action_ids', `at most ${MAX_REPLAY} action ids`, 'too_long');
    const bundle = candidate ? await this.policies.candidate(tenantId, candidate) : await this.policies.active(tenantId);
    const stored = new Map((await postgres(() => this.decisions.byActions(tenantId, [...new Set(actionIds)]))).map((d) => [d.action_id, d]));
    const out: ReplayResult[] = [];
    for (const id of actionIds) {
      const d = stored.get(id);
      if (!d) {
        out.push({ action_id: id, found: false, tool: '', original_decision: '', replay_decision: '', consistent: false, original_violations: [], replay_violations: [], original_bundle_revision: '', replay_bundle_revision: bundle.revision, erased_subjects: [] });
        continue;
      }
      out.push(await this.one(tenantId, d, bundle));
    }
    return out;
  }

  private async one(tenantId: string, d: StoredDecision, bundle: Awaited<ReturnType<TenantPolicies['active']>>): Promise<ReplayResult> {
    const revealed = d.pii_detected ? await this.revealer.reveal(tenantId, d.stored_params) : { params: d.stored_params, erasedSubjects: [] };
    const call: ToolCallFacts = {
      agentId: d.agent_id,
      agentType: d.agent_type,
      agentVersion: d.agent_version,
      tool: d.tool,
      method: d.method,
      params: revealed.params,
      piiDetected: d.pii_detected,
      sessionId: d.session_id ?? '',
    };
    const nowNs = BigInt(d.evaluated_at.getTime()) * 1_000_000n;
    const { outcome } = await twoPass(bundle, call, nowNs, async () => d.behavioral);
    return {
      action_id: d.action_id,
      found: true,
      tool: d.tool,
      original_decision: d.decision,
      replay_decision: outcome.decision,
      consistent: d.decision === outcome.decision,
      original_violations: d.violations,
      replay_violations: outcome.violations,
      original_bundle_revision: d.bundle_revision,
      replay_bundle_revision: bundle.revision,
      erased_subjects: revealed.erasedSubjects,
    };
  }
}
