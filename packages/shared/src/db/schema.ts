/**
 * The database schema as one type, assembled from each owner's tables (`tables/<owner>.ts`).
 * Migrations under `migrations/` are the source of truth; keep these interfaces in step with them.
 */
import type { AnchorTables } from './tables/anchor';
import type { AuditTables } from './tables/audit';
import type { CoreTables } from './tables/core';
import type { ManagedTables } from './tables/managed';
import type { MerkleTables } from './tables/merkle';
import type { PolicyTables } from './tables/policy';
import type { VaultTables } from './tables/vault';
import type { WebhookTables } from './tables/webhook';

export interface Database extends CoreTables, AuditTables, MerkleTables, PolicyTables, VaultTables, WebhookTables, AnchorTables, ManagedTables {}
