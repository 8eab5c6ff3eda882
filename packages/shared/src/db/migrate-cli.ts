/** `pnpm migrate`: bring the database named by DATABASE_URL to the latest schema. */
import { loadConfig, storeSettings } from '../config';
import { migrateToLatest } from './migrate';

async function main(): Promise<void> {
  const { databaseUrl } = loadConfig({ databaseUrl: storeSettings.databaseUrl });
  const applied = await migrateToLatest(databaseUrl);
  const where = new URL(databaseUrl);
  console.log(`migrations: ${applied.length ? applied.join(', ') : 'already up to date'} (${where.host}${where.pathname})`);
}

main().catch((e) => {
  console.error(`migration failed: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});
