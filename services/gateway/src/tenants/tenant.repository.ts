/** Queries on tenants, users and API keys. Tenant id first wherever a tenant owns the row. */
import type { Conn, Db } from '@agw/shared';
import type { Role } from './roles';

export interface TenantRow {
  id: string;
  slug: string;
  name: string;
  created_at: Date;
}

export interface UserRow {
  id: string;
  tenant_id: string;
  email: string;
  password_hash: string | null;
  email_verified: boolean;
  is_admin: boolean;
  github_id: string | null;
  role: Role;
}

/** A new tenant's rows: the tenant, its tenant key and its settings. */
async function insertTenant(
  trx: Conn,
  tenant: { id: string; slug: string; name: string },
  apiKey: { id: string; keyHash: string; keyPrefix: string },
  settings: Record<string, unknown>,
): Promise<void> {
  await trx.insertInto('tenants').values(tenant).execute();
  await trx.insertInto('api_keys').values({ id: apiKey.id, tenant_id: tenant.id, key_hash: apiKey.keyHash, key_prefix: apiKey.keyPrefix }).execute();
  await trx.insertInto('tenant_settings').values({ tenant_id: tenant.id, settings: JSON.stringify(settings) }).execute();
}

export class TenantRepository {
  constructor(private readonly db: Db) {}

  /** Tenants with the columns of a TenantRow. */
  private tenants() {
    return this.db.selectFrom('tenants').select(['id', 'slug', 'name', 'created_at']);
  }

  /** Users with the columns of a UserRow. */
  private users() {
    return this.db.selectFrom('users').select(['id', 'tenant_id', 'email', 'password_hash', 'email_verified', 'is_admin', 'github_id', 'role']);
  }

  async createTenantWithOwner(
    tenant: { id: string; slug: string; name: string },
    user: { id: string; email: string; passwordHash: string | null; githubId?: string | null; isAdmin: boolean; emailVerified?: boolean },
    apiKey: { id: string; keyHash: string; keyPrefix: string },
    settings: Record<string, unknown>,
  ): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await insertTenant(trx, tenant, apiKey, settings);
      await trx
        .insertInto('users')
        .values({
          id: user.id,
          tenant_id: tenant.id,
          email: user.email,
          password_hash: user.passwordHash,
          github_id: user.githubId ?? null,
          is_admin: user.isAdmin,
          email_verified: user.emailVerified ?? false,
        })
        .execute();
    });
  }

  async createTenant(tenant: { id: string; slug: string; name: string }, apiKey: { id: string; keyHash: string; keyPrefix: string }, settings: Record<string, unknown>): Promise<void> {
    await this.db.transaction().execute((trx) => insertTenant(trx, tenant, apiKey, settings));
  }

  slugExists(slug: string): Promise<boolean> {
    return this.db.selectFrom('tenants').select('id').where('slug', '=', slug).executeTakeFirst().then(Boolean);
  }

  getTenant(tenantId: string): Promise<TenantRow | undefined> {
    return this.tenants().where('id', '=', tenantId).executeTakeFirst();
  }

  getTenantBySlug(slug: string): Promise<TenantRow | undefined> {
    return this.tenants().where('slug', '=', slug).executeTakeFirst();
  }

  listTenants(): Promise<TenantRow[]> {
    return this.tenants().orderBy('created_at').execute();
  }

  findUserByEmail(email: string): Promise<UserRow | undefined> {
    return this.users().where('email', '=', email).executeTakeFirst();
  }

  findUserByGithubId(githubId: string): Promise<UserRow | undefined> {
    return this.users().where('github_id', '=', githubId).executeTakeFirst();
  }

  getUser(tenantId: string, userId: string): Promise<UserRow | undefined> {
    return this.users().where('tenant_id', '=', tenantId).where('id', '=', userId).executeTakeFirst();
  }

  /** The tenant's first owner. */
  owner(tenantId: string): Promise<{ id: string; email: string } | undefined> {
    return this.db.selectFrom('users').select(['id', 'email']).where('tenant_id', '=', tenantId).where('role', '=', 'owner').orderBy('created_at').orderBy('id').executeTakeFirst();
  }

  async linkGithub(tenantId: string, userId: string, githubId: string): Promise<void> {
    await this.db.updateTable('users').set({ github_id: githubId, email_verified: true }).where('tenant_id', '=', tenantId).where('id', '=', userId).execute();
  }

  /** Mark the address verified; false when it already was (a verification link works once). */
  async markEmailVerified(tenantId: string, userId: string): Promise<boolean> {
    const r = await this.db
      .updateTable('users')
      .set({ email_verified: true })
      .where('tenant_id', '=', tenantId)
      .where('id', '=', userId)
      .where('email_verified', '=', false)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }
}
