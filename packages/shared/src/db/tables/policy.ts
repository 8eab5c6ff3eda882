/** Tables owned by the policy service (migration 20261121_0003_policy). */
import type { ColumnType, JSONColumnType } from 'kysely';
import type { OptionalNull } from './columns';

/** The effective policy of a tenant (a tenant without a row has the `general` template with defaults). */
export interface PolicyTenantPoliciesTable {
  tenant_id: string;
  policy_template: string;
  /** the tenant's policy_config overrides (merged over the template defaults at evaluation) */
  policy_overrides: JSONColumnType<Record<string, unknown>>;
  custom_policy: string | null;
  /** short content hash of the bundle (template source or custom source + effective config) */
  revision: string;
  bundle_hash: string;
  activated_at: ColumnType<Date, Date | string | undefined, Date | string>;
  /** activated from an OPA bundle: its `.manifest` revision and SHA-256 digest (else null) */
  source_revision: OptionalNull<string>;
  source_digest: OptionalNull<string>;
}

/** Every bundle revision a tenant had, so an audit record's bundle_revision can be looked up. */
export interface PolicyBundleRevisionsTable {
  tenant_id: string;
  revision: string;
  bundle_hash: string;
  policy_template: string;
  /** the effective (merged) config */
  policy_config: JSONColumnType<Record<string, unknown>>;
  custom_policy: string | null;
  created_at: ColumnType<Date, Date | string | undefined, never>;
}

/** A candidate policy in shadow (migration 20261216_0037_policy_shadow): one running per tenant at most. */
export interface PolicyShadowsTable {
  shadow_id: string;
  tenant_id: string;
  /** running | ended (max_calls or expires_at reached) | promoted | discarded */
  status: string;
  policy_template: string;
  policy_overrides: JSONColumnType<Record<string, unknown>>;
  custom_policy: string | null;
  revision: string;
  bundle_hash: string;
  max_calls: number;
  calls: ColumnType<number, number | undefined, number>;
  dropped: ColumnType<number, number | undefined, number>;
  started_by: string;
  started_at: ColumnType<Date, Date | string | undefined, never>;
  expires_at: ColumnType<Date, Date | string, Date | string>;
  ended_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  end_reason: string | null;
  /** the candidate came from an OPA bundle: its `.manifest` revision and digest */
  source_revision: OptionalNull<string>;
  source_digest: OptionalNull<string>;
}

/** A tenant's OPA bundle source, polled with its ETag (migration 20261216_0037). */
export interface PolicyBundleSourcesTable {
  tenant_id: string;
  url: string;
  /** PEM (SPKI) public key the bundle's .signatures.json must verify with */
  public_key: string;
  scope: string | null;
  /** direct | shadow */
  activation: string;
  shadow_max_calls: number | null;
  shadow_seconds: number | null;
  etag: string | null;
  last_polled_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** activated | shadowed | unchanged | refused | error */
  last_outcome: string | null;
  last_detail: string | null;
  revision: string | null;
  digest: string | null;
  created_by: string;
  created_at: ColumnType<Date, Date | string | undefined, never>;
}

/** The candidate's decision of one governed call while a shadow ran, beside the live one (by action id). */
export interface PolicyShadowDecisionsTable {
  shadow_id: string;
  tenant_id: string;
  action_id: string;
  agent_id: string;
  tool: string;
  live_decision: string;
  live_violations: JSONColumnType<string[]>;
  live_revision: string;
  live_eval_ms: number;
  candidate_decision: string;
  candidate_violations: JSONColumnType<string[]>;
  candidate_eval_ms: number;
  differs: boolean;
  decided_at: ColumnType<Date, Date | string, never>;
}

/** One batch of a shadow's decisions: element i of each array is one call (migration 0050). */
export interface PolicyShadowBatchesTable {
  shadow_id: string;
  tenant_id: string;
  batch_id: string;
  decided_at: ColumnType<Date, Date | string, never>;
  action_ids: string[];
  live_decisions: string[];
  candidate_decisions: string[];
  live_eval_ms: number[];
  candidate_eval_ms: number[];
}

export interface PolicyTables {
  policy_tenant_policies: PolicyTenantPoliciesTable;
  policy_bundle_revisions: PolicyBundleRevisionsTable;
  policy_shadows: PolicyShadowsTable;
  policy_shadow_decisions: PolicyShadowDecisionsTable;
  policy_shadow_batches: PolicyShadowBatchesTable;
  policy_bundle_sources: PolicyBundleSourcesTable;
}
