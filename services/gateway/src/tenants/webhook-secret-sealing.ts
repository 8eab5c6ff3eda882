/**
 * The migration of webhook secrets written in clear (before they were sealed by the vault): a sweep the
 * gateway runs at start, in the background, over every tenant_settings row that still holds
 * `webhook_secret`. Each is sealed (the vault's SealSecret) and replaced by `webhook_secret_sealed` in one
 * conditional update (only if the clear value is still the one sealed, so a concurrent PATCH or another
 * replica's sweep wins). A SQL migration cannot do it: the key lives in the HSM. Until a row is swept the
 * webhook service signs with the clear value as before. A pass that fails (the vault not up yet) is
 * retried every RETRY_MS until one completes; then the sweep stops.
 */
import { type Db, type Logger } from '@agw/shared';
import { sql } from 'kysely';
import type { WebhookSecretSealer } from './settings.service';

const RETRY_MS = 15_000;

/** One pass; returns how many rows were re-sealed. */
export async function sealClearWebhookSecrets(db: Db, sealer: Pick<WebhookSecretSealer, 'seal'>): Promise<number> {
  const rows = await db
    .selectFrom('tenant_settings')
    .select(['tenant_id', 'settings'])
    .where(sql<boolean>`settings ? 'webhook_secret'`)
    .execute();
  let sealed = 0;
  for (const row of rows) {
    const clear = (row.settings as Record<string, unknown>).webhook_secret;
    if (typeof clear !== 'string' || !clear) {
      await db.updateTable('tenant_settings').set({ settings: sql`settings - 'webhook_secret'` }).where('tenant_id', '=', row.tenant_id).execute();
      continue;
    }
    const sealedJson = await sealer.seal(row.tenant_id, clear);
    const r = await db
      .updateTable('tenant_settings')
      .set({ settings: sql`(settings - 'webhook_secret') || jsonb_build_object('webhook_secret_sealed', ${sealedJson}::text)`, updated_at: new Date() })
      .where('tenant_id', '=', row.tenant_id)
      .where(sql<boolean>`settings->>'webhook_secret' = ${clear}`)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) > 0) sealed++;
  }
  return sealed;
}

/** Runs the sweep in the background until one pass completes; returns its stop function. */
export function startWebhookSecretSealing(db: Db, sealer: Pick<WebhookSecretSealer, 'seal'>, logger: Logger): () => void {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const pass = async () => {
    try {
      const n = await sealClearWebhookSecrets(db, sealer);
      if (n) logger.info({ sealed: n }, 'webhook secrets stored in clear were sealed by the vault');
    } catch (e) {
      if (stopped) return;
      logger.warn({ err: e, retry_in_ms: RETRY_MS }, 'webhook secrets in clear could not be sealed yet; will retry');
      timer = setTimeout(() => void pass(), RETRY_MS);
      timer.unref();
    }
  };
  timer = setTimeout(() => void pass(), 1000);
  timer.unref();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
