/**
 * What a tenant's public dashboard publishes (docs/public-dashboard.md): aggregates only. Decision counts
 * by kind and UTC day, the chain's verification status, the latest signed tree head (checkpoint) and
 * anchor, the policy template's name. Never parameters, agent ids, action ids or personal data: every
 * field is picked here by name, nothing is passed through. The aggregate is cached briefly in Redis
 * (shared by the replicas): verifying a chain reads every record.
 */
import { AppError, type Redis } from '@agw/shared';
import { z } from 'zod';
import type { AnchorClient, AuditClient, MerkleClient, PolicyClient } from '../clients/grpc-clients';
import { timestamp } from '../openapi/schema';
import type { SettingsService } from '../tenants/settings.service';
import type { PublicTenant } from './public-tenants.repository';

export const PERIOD_DAYS = 30;

const counts = z.record(z.string(), z.number().int()).meta({ description: 'records by decision (allow, deny, requires_human, observed, and human decisions: approved, rejected)' });

export const signedHeadSchema = z
  .object({
    origin: z.string(),
    tree_size: z.number().int(),
    merkle_root: z.string(),
    checkpoint: z.string().meta({ description: 'the C2SP signed note, checkable offline with the verifier key' }),
    key_name: z.string(),
    signed_at: timestamp(),
  })
  .meta({ id: 'PublicSignedTreeHead' });

export const publicAnchorSchema = z
  .object({
    network: z.string(),
    chain_id: z.number().int(),
    contract_address: z.string(),
    tx_hash: z.string(),
    block_number: z.number().int(),
    anchored_at: timestamp(),
    merkle_root: z.string(),
    tenant_root: z.string(),
    tree_size: z.number().int(),
    explorer_tx_url: z.string().nullable(),
  })
  .meta({ id: 'PublicAnchor' });

export const publicTenantSchema = z.object({ tenant_id: z.string(), slug: z.string(), name: z.string() });

export const publicAggregateSchema = z.object({
  policy_template: z.string().meta({ description: 'the name of the policy template in force (never its parameters)' }),
  decisions: z.object({
    period_days: z.number().int(),
    totals: z.object({ today: counts, last_7_days: counts, last_30_days: counts }),
    daily: z.array(z.object({ date: z.string().meta({ description: 'YYYY-MM-DD (UTC)' }), counts })),
  }),
  chain: z.object({ valid: z.boolean(), record_count: z.number().int() }),
  signed_tree_head: signedHeadSchema.nullable(),
  verifier_key: z.string().nullable().meta({ description: 'the checkpoints’ verifier key (name+keyhash+base64)' }),
  anchor: publicAnchorSchema.nullable(),
  generated_at: timestamp(),
});

export const publicDashboardSchema = publicAggregateSchema.extend({ tenant: publicTenantSchema }).meta({ id: 'PublicDashboard' });
export type PublicAggregate = z.infer<typeof publicAggregateSchema>;
export type SignedHead = z.infer<typeof signedHeadSchema>;

export interface PublicDashboardDeps {
  redis: Redis;
  audit: AuditClient;
  merkle: MerkleClient;
  anchor: AnchorClient;
  policy: PolicyClient;
  settings: SettingsService;
  cacheSeconds: number;
}

const add = (into: Record<string, number>, from: Record<string, number>) => {
  for (const [k, v] of Object.entries(from)) into[k] = (into[k] ?? 0) + v;
};

/** YYYY-MM-DD of `daysAgo` days before today (UTC). */
const dayString = (daysAgo: number) => new Date(Date.now() - daysAgo * 86_400_000).toISOString().slice(0, 10);

export class PublicDashboard {
  constructor(private readonly d: PublicDashboardDeps) {}

  /** A cached value (JSON in Redis for `cacheSeconds`); Redis down: computed every time. */
  private async cached<T>(key: string, compute: () => Promise<T>): Promise<T> {
    const hit = await this.d.redis.get(key).catch(() => null);
    if (hit) return JSON.parse(hit) as T;
    const value = await compute();
    await this.d.redis.set(key, JSON.stringify(value), 'EX', Math.max(1, this.d.cacheSeconds)).catch(() => undefined);
    return value;
  }

  /** The latest signed tree head of a tenant, or null before its first tree. */
  signedHead(tenantId: string): Promise<SignedHead | null> {
    return this.cached(`agw:public:v1:head:${tenantId}`, async () => {
      try {
        const c = await this.d.merkle.getCheckpoint({ tenantId });
        return { origin: c.origin, tree_size: c.treeSize, merkle_root: c.merkleRoot, checkpoint: c.note, key_name: c.keyName, signed_at: c.signedAt };
      } catch (e) {
        if (e instanceof AppError && e.code === 'not_found') return null;
        throw e;
      }
    });
  }

  aggregate(tenant: PublicTenant): Promise<PublicAggregate> {
    const tenantId = tenant.tenant_id;
    return this.cached(`agw:public:v1:aggregate:${tenantId}`, async () => {
      const settings = await this.d.settings.stored(tenantId);
      const requestedChain = typeof settings.anchor_chain === 'string' ? settings.anchor_chain : '';
      const [countsOut, verify, head, policy, anchor, vkey] = await Promise.all([
        this.d.audit.decisionCounts({ tenantId, days: PERIOD_DAYS }),
        this.d.audit.verify({ tenantId }),
        this.signedHead(tenantId),
        this.d.policy.getTenantPolicy({ tenantId }),
        this.d.anchor.status({ tenantId, requestedChain }),
        this.d.merkle.getVerifierKey({ tenantId }).then(
          (k) => k.vkey,
          () => null,
        ),
      ]);
      const byDay = new Map<string, Record<string, number>>();
      for (const c of countsOut.counts) byDay.set(c.day, { ...(byDay.get(c.day) ?? {}), [c.decision]: Number(c.count) });
      const daily = [...byDay.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([date, c]) => ({ date, counts: c }));
      const today: Record<string, number> = {};
      const week: Record<string, number> = {};
      const month: Record<string, number> = {};
      for (const { date, counts: c } of daily) {
        add(month, c);
        if (date >= dayString(6)) add(week, c);
        if (date === dayString(0)) add(today, c);
      }
      const a = anchor.lastAnchor;
      return {
        policy_template: policy.policyTemplate || 'general',
        decisions: { period_days: PERIOD_DAYS, totals: { today, last_7_days: week, last_30_days: month }, daily },
        chain: { valid: verify.valid, record_count: verify.recordCount },
        signed_tree_head: head,
        verifier_key: head ? vkey : null,
        anchor: a
          ? {
              network: a.network,
              chain_id: a.chainId,
              contract_address: a.contractAddress,
              tx_hash: a.txHash,
              block_number: a.blockNumber,
              anchored_at: a.anchoredAt,
              merkle_root: a.aggregateRoot,
              tenant_root: a.tenantRoot,
              tree_size: a.treeSize,
              explorer_tx_url: a.explorerTxUrl || null,
            }
          : null,
        generated_at: new Date().toISOString(),
      };
    });
  }
}
