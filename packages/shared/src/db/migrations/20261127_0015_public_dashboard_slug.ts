import { type Kysely, sql } from 'kysely';

/**
 * A public dashboard's slug (tenant_settings.settings `public_dashboard: {enabled, slug}`,
 * docs/public-dashboard.md) is unique across tenants, and stays reserved while the dashboard is switched
 * off (a visitor's link never lands on another tenant's page); the index also finds the tenant by slug.
 * Tenants without a dashboard have no slug (NULL), and NULLs never collide in a unique index.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE UNIQUE INDEX tenant_settings_public_slug_idx ON tenant_settings ((settings->'public_dashboard'->>'slug'))
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX tenant_settings_public_slug_idx`.execute(db);
}
