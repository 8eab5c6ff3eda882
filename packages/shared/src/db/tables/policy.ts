/** Tables owned by the policy service (migration 20261121_0003_policy). */
import type { ColumnType, JSONColumnType } from 'kysely';

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

export interface PolicyTables {
  policy_tenant_policies: PolicyTenantPoliciesTable;
  policy_bundle_revisions: PolicyBundleRevisionsTable;
}
