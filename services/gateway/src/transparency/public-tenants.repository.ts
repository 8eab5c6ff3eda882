/**
 * The tenants that publish a public dashboard (tenant_settings.settings `public_dashboard: {enabled:
 * true, slug}`), read on every public request so an opt-out takes effect at once. The unique index of
 * migration 0015 keeps slugs unique (reserved while switched off) and serves the lookup by slug.
 */
import type { Db } from '@agw/shared';
import { sql } from 'kysely';

export interface PublicTenant {
  tenant_id: string;
  slug: string;
  name: string;
}

const enabled = sql<boolean>`(s.settings->'public_dashboard'->>'enabled') = 'true'`;
const slugOf = sql<string>`s.settings->'public_dashboard'->>'slug'`;

export class PublicTenantsRepository {
  constructor(private readonly db: Db) {}

  private base() {
    return this.db
      .selectFrom('tenant_settings as s')
      .innerJoin('tenants as t', 't.id', 's.tenant_id')
      .select(['t.id as tenant_id', 't.name as name', slugOf.as('slug')])
      .where(enabled);
  }

  async bySlug(slug: string): Promise<PublicTenant | undefined> {
    return this.base().where(slugOf, '=', slug).executeTakeFirst();
  }

  async byTenantId(tenantId: string): Promise<PublicTenant | undefined> {
    return this.base().where('t.id', '=', tenantId).executeTakeFirst();
  }

  /** Opted-in tenants in slug order (slugs are unique), at most `limit`, after the slug `after` when given. */
  async list(limit: number, after?: string): Promise<PublicTenant[]> {
    let q = this.base();
    if (after) q = q.where(slugOf, '>', after);
    return q.orderBy(slugOf).limit(limit).execute();
  }
}
