/**
 * POST /api/backup/trigger: an immediate, restorable backup (packages/shared/src/db/backup.ts), at most 2 per
 * minute per tenant across every gateway replica (a sliding window in Redis). A tenant's caller gets a backup
 * of its own rows (plain SQL: the schema and the tenant's rows, one snapshot); an administrator gets the whole
 * database (pg_dump custom format). The file goes to BACKUP_DIR; the answer names it with its size and
 * SHA-256. Restoring: docs/operations.md, "Restore a backup".
 */
import { DependencyUnavailableError, RateLimitError, createBackup } from '@agw/shared';
import { Router } from 'express';
import type { TenantsFeature } from '../../features/tenants.feature';
import { z } from 'zod';
import { addPaths } from '../../openapi/openapi';
import { errors, reply, response, timestamp } from '../../openapi/schema';
import { authOf } from '../request-context';

/** the spec's limit: 2 backups per minute */
export const BACKUPS_PER_MINUTE = 2;

export function backupRoutes(d: Pick<TenantsFeature, 'config' | 'logger' | 'rateLimiter'>): Router {
  const r = Router();
  r.post('/backup/trigger', async (req, res) => {
    const auth = authOf(req);
    const scope = auth.isAdmin ? 'database' : 'tenant';
    const allowed = await d.rateLimiter.allowKey(`agw:backup:${scope === 'database' ? 'admin' : auth.tenantId}`, BACKUPS_PER_MINUTE, 60_000).catch((e: unknown) => {
      throw new DependencyUnavailableError('the rate limit store is unreachable; no backup was made', { cause: e });
    });
    if (!allowed) throw new RateLimitError(`At most ${BACKUPS_PER_MINUTE} backups per minute; try again in a minute`, undefined, 60);
    const backup = await createBackup({
      databaseUrl: d.config.databaseUrl,
      dir: d.config.backupDir,
      tenantId: scope === 'tenant' ? auth.tenantId : undefined,
      timeoutMs: d.config.backupTimeoutMs,
    });
    d.logger.info({ tenantId: auth.tenantId, backupId: backup.backup_id, scope, file: backup.file, bytes: backup.size_bytes, ms: backup.duration_ms }, 'backup written');
    reply(res, backupResponse, { status: 'completed', ...backup });
  });
  return r;
}

const backupResponse = z.object({
  status: z.literal('completed'),
  backup_id: z.string(),
  scope: z.enum(['tenant', 'database']).meta({ description: "tenant: the caller's rows and the schema; database: everything (administrators)" }),
  tenant_id: z.string().nullable(),
  format: z.enum(['sql', 'custom']).meta({ description: 'sql: restore with psql; custom: restore with pg_restore' }),
  file: z.string(),
  path: z.string().meta({ description: 'where the gateway wrote it (BACKUP_DIR)' }),
  size_bytes: z.number().int(),
  sha256: z.string(),
  created_at: timestamp(),
  duration_ms: z.number().int().optional(),
  pg_dump_version: z.string().optional(),
  server_version: z.string().optional(),
  rows: z.record(z.string(), z.number().int()).optional().meta({ description: 'tenant scope: rows written per table' }),
  restore_command: z.string().optional(),
});
addPaths({
  '/backup/trigger': {
    post: {
      summary: 'Make a backup now (2 per minute)',
      description: "A tenant's caller gets its own rows with the schema (plain SQL, one snapshot); an administrator gets the whole database (pg_dump custom format). Written to BACKUP_DIR; restore steps in docs/operations.md.",
      responses: {
        200: response('the backup was written', backupResponse),
        401: errors[401](),
        429: errors[429]('more than 2 backups in the last minute (Retry-After)'),
        502: errors[502]('the database or the PostgreSQL client tools are unavailable'),
      },
    },
  },
});
