/**
 * Replay: re-evaluate stored decisions under the tenant's current policy (or a candidate not saved yet), with the original input (params
 * revealed from their stored envelopes, the behavioral data of the decision, the decision time) so only
 * the policy differs. Reports original and replay decisions and whether they agree.
 */
import type { decision } from '@agw/proto';
import { InputError, behavioralInput, jsonOf, objectFromJson } from '@agw/shared';
import type { PolicyChange, TenantPolicies } from '../bundles/tenant-policies';
import { toolCallFacts, twoPass } from '../decisions/policy-evaluation';
import type { ParamsRevealer } from './params-revealer';

/**
 * Where the decisions' replay inputs come from: the audit service, which commits them with the records
 * (AuditService.GetDecisionInputs; decision-inputs.ts). Unknown ids are left out of the answer.
 */
export interface DecisionInputSource {
  byActions(tenantId: string, actionIds: string[]): Promise<decision.DecisionInput[]>;
}

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
    private readonly inputs: DecisionInputSource,
    private readonly revealer: ParamsRevealer,
  ) {}

  /** Under the tenant's active policy, or under `candidate` (a change not saved: what it would decide). */
  async replay(tenantId: string, actionIds: string[], candidate?: PolicyChange): Promise<ReplayResult[]> {
    if (actionIds.length > MAX_REPLAY) throw InputError.field('action_ids', `at most ${MAX_REPLAY} action ids`, 'too_long');
    const bundle = candidate ? await this.policies.candidate(tenantId, candidate) : await this.policies.active(tenantId);
    const stored = new Map((await this.inputs.byActions(tenantId, [...new Set(actionIds)])).map((d) => [d.action_id, d]));
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

  private async one(tenantId: string, d: decision.DecisionInput, bundle: Awaited<ReturnType<TenantPolicies['active']>>): Promise<ReplayResult> {
    const c = d.call!;
    const storedParams = objectFromJson(jsonOf(c, 'params'), 'call.params');
    const revealed = c.pii_detected ? await this.revealer.reveal(tenantId, storedParams) : { params: storedParams, erasedSubjects: [] };
    const nowNs = BigInt(Date.parse(d.evaluated_at)) * 1_000_000n;
    const { outcome } = await twoPass(bundle, toolCallFacts(c, revealed.params), nowNs, async () => (d.behavioral ? behavioralInput(d.behavioral) : null));
    return {
      action_id: d.action_id,
      found: true,
      tool: c.tool,
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
