/** Test tenants and members written straight to the real Postgres through the gateway's own TenantRepository. */
import { randomUUID } from 'node:crypto';
import type { Db } from '@agw/shared';
import { type NewApiKey, newApiKey } from '../../src/tenants/api-keys';
import type { Role } from '../../src/tenants/roles';
import { TenantRepository } from '../../src/tenants/tenant.repository';

/** A new tenant named `name` (its slug: the name in lower case and its id), with `settings`, and its tenant API key. */
export async function createTestTenantWithKey(db: Db, name: string, settings: Record<string, unknown> = {}): Promise<{ id: string; key: NewApiKey }> {
  const id = randomUUID();
  const key = newApiKey();
  await new TenantRepository(db).createTenant({ id, slug: `${name.toLowerCase()}-${id}`, name }, key, settings);
  return { id, key };
}

/** A new tenant as createTestTenantWithKey makes it; returns its id. */
export const createTestTenant = async (db: Db, name: string, settings: Record<string, unknown> = {}): Promise<string> => (await createTestTenantWithKey(db, name, settings)).id;

export interface TestMember {
  id: string;
  email: string;
}

/** A verified member of `tenantId` with `role` (no password: a test signs it in otherwise). */
export async function addTestMember(db: Db, tenantId: string, email: string, role: Role): Promise<TestMember> {
  const m = { id: randomUUID(), email };
  await db.insertInto('users').values({ id: m.id, tenant_id: tenantId, email, password_hash: null, email_verified: true, is_admin: false, role }).execute();
  return m;
}
