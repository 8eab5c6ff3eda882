/** The only queries on policy_tenant_policies / policy_bundle_revisions. Tenant id first, always. */
import type { Db } from '@agw/shared';

export interface StoredTenantPolicy {
  tenant_id: string;
  policy_template: string;
  policy_overrides: Record<string, unknown>;
  custom_policy: string | null;
  revision: string;
  bundle_hash: string;
  activated_at: Date;
  /** activated from an OPA bundle: its `.manifest` revision and digest */
  source_revision: string | null;
  source_digest: string | null;
}

export class TenantPolicyRepository {
  constructor(private readonly db: Db) {}

  async get(tenantId: string): Promise<StoredTenantPolicy | undefined> {
    return this.db
      .selectFrom('policy_tenant_policies')
      .select(['tenant_id', 'policy_template', 'policy_overrides', 'custom_policy', 'revision', 'bundle_hash', 'activated_at', 'source_revision', 'source_digest'])
      .where('tenant_id', '=', tenantId)
      .executeTakeFirst();
  }

  /** Activates a policy and records its revision, in one transaction. */
  async activate(
    tenantId: string,
    p: {
      template: string;
      overrides: Record<string, unknown>;
      config: Record<string, unknown>;
      customPolicy: string | null;
      revision: string;
      hash: string;
      source?: { revision: string; digest: string };
    },
  ): Promise<StoredTenantPolicy> {
    return this.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('policy_bundle_revisions')
        .values({
          tenant_id: tenantId,
          revision: p.revision,
          bundle_hash: p.hash,
          policy_template: p.template,
          policy_config: JSON.stringify(p.config),
          custom_policy: p.template === 'custom' ? p.customPolicy : null,
        })
        .onConflict((oc) => oc.columns(['tenant_id', 'revision']).doNothing())
        .execute();
      const values = {
        policy_template: p.template,
        policy_overrides: JSON.stringify(p.overrides),
        custom_policy: p.customPolicy,
        revision: p.revision,
        bundle_hash: p.hash,
        activated_at: new Date(),
        source_revision: p.source?.revision ?? null,
        source_digest: p.source?.digest ?? null,
      };
      return trx
        .insertInto('policy_tenant_policies')
        .values({ tenant_id: tenantId, ...values })
        .onConflict((oc) => oc.column('tenant_id').doUpdateSet(values))
        .returning(['tenant_id', 'policy_template', 'policy_overrides', 'custom_policy', 'revision', 'bundle_hash', 'activated_at', 'source_revision', 'source_digest'])
        .executeTakeFirstOrThrow();
    });
  }

  async revision(tenantId: string, revision: string) {
    return this.db
      .selectFrom('policy_bundle_revisions')
      .select(['revision', 'bundle_hash', 'policy_template', 'policy_config', 'created_at'])
      .where('tenant_id', '=', tenantId)
      .where('revision', '=', revision)
      .executeTakeFirst();
  }
}
