/**
 * What a tenant's public dashboard publishes (docs/public-dashboard.md): aggregates only. Decision counts
 * by kind and UTC day, the chain's verification status, the latest signed tree head (checkpoint) and
 * anchor, the policy template's name. Never parameters, agent ids, action ids or personal data: every
 * field is picked here by name, nothing is passed through. The aggregate is cached briefly in Redis
 * (shared by the replicas): verifying a chain reads every record.
 */
import { AppError, type Logger, type Redis, isDependencyDown } from '@agw/shared';
import { z } from 'zod';
import type { AnchorClient, AuditClient, MerkleClient, PolicyClient } from '../clients/grpc-clients';
import { timestamp } from '../api-shapes';
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

/** The parts of a public page, each read from its own service; one that cannot be read is null and named in `unavailable`. */
export const PUBLIC_SECTIONS = ['policy_template', 'decisions', 'chain', 'signed_tree_head', 'anchor'] as const;
export type PublicSection = (typeof PUBLIC_SECTIONS)[number];

export const publicAggregateSchema = z.object({
  policy_template: z.string().nullable().meta({ description: 'the name of the policy template in force (never its parameters); null while unavailable' }),
  decisions: z
    .object({
      period_days: z.number().int(),
      totals: z.object({ today: counts, last_7_days: counts, last_30_days: counts }),
      daily: z.array(z.object({ date: z.string().meta({ description: 'YYYY-MM-DD (UTC)' }), counts })),
    })
    .nullable()
    .meta({ description: 'null while unavailable' }),
  chain: z.object({ valid: z.boolean(), record_count: z.number().int() }).nullable().meta({ description: 'null while unavailable' }),
  signed_tree_head: signedHeadSchema.nullable().meta({ description: 'null before the first tree, or while unavailable' }),
  verifier_key: z.string().nullable().meta({ description: 'the checkpoints’ verifier key (name+keyhash+base64)' }),
  anchor: publicAnchorSchema.nullable().meta({ description: 'null before the first anchor, or while unavailable' }),
  unavailable: z
    .array(z.enum(PUBLIC_SECTIONS))
    .meta({ description: 'sections that could not be read just now (a service or store behind them is down); the page shows the rest, and is not cached' }),
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
  logger: Logger;
}

const add = (into: Record<string, number>, from: Record<string, number>) => {
  for (const [k, v] of Object.entries(from)) into[k] = (into[k] ?? 0) + v;
};

/** YYYY-MM-DD of `daysAgo` days before today (UTC). */
const dayString = (daysAgo: number) => new Date(Date.now() - daysAgo * 86_400_000).toISOString().slice(0, 10);

export class PublicDashboard {
  constructor(private readonly d: PublicDashboardDeps) {}

  /** A cached value (JSON in Redis for `cacheSeconds`); Redis down: computed every time. A partial value is never kept. */
  private async cached<T>(key: string, compute: () => Promise<T>, keep: (value: T) => boolean = () => true): Promise<T> {
    const hit = await this.d.redis.get(key).catch(() => null);
    if (hit) return JSON.parse(hit) as T;
    const value = await compute();
    if (keep(value)) await this.d.redis.set(key, JSON.stringify(value), 'EX', Math.max(1, this.d.cacheSeconds)).catch(() => undefined);
    return value;
  }

  /** The latest signed tree head of a tenant, or null before its first tree. */
  signedHead(tenantId: string): Promise<SignedHead | null> {
    return this.cached(`agw:public:v1:head:${tenantId}`, async () => {
      try {
        const c = await this.d.merkle.getCheckpoint({ tenant_id: tenantId });
        return { origin: c.origin, tree_size: c.tree_size, merkle_root: c.merkle_root, checkpoint: c.note, key_name: c.key_name, signed_at: c.signed_at };
      } catch (e) {
        if (e instanceof AppError && e.code === 'not_found') return null;
        throw e;
      }
    });
  }

  /**
   * The page. Each section is read on its own: one whose service (or store) is down is null and named in
   * `unavailable`, so a status page still shows what it can while a part of the fleet is down. When every
   * section is down the error itself is the answer (502/503 with Retry-After).
   */
  aggregate(tenant: PublicTenant): Promise<PublicAggregate> {
    const tenantId = tenant.tenant_id;
    return this.cached(
      `agw:public:v1:aggregate:${tenantId}`,
      async () => {
        const settings = await this.d.settings.stored(tenantId);
        const requestedChain = typeof settings.anchor_chain === 'string' ? settings.anchor_chain : '';
        const unavailable: PublicSection[] = [];
        const failures: unknown[] = [];
        const section = <T>(name: PublicSection, read: Promise<T>): Promise<T | null> =>
          read.catch((e: unknown) => {
            if (!isDependencyDown(e)) throw e;
            this.d.logger.warn({ tenant_id: tenantId, section: name, err: (e as Error).message }, 'public dashboard section unavailable');
            unavailable.push(name);
            failures.push(e);
            return null;
          });
        const [countsOut, verify, head, policy, anchor, vkey] = await Promise.all([
          section('decisions', this.d.audit.decisionCounts({ tenant_id: tenantId, days: PERIOD_DAYS })),
          section('chain', this.d.audit.verify({ tenant_id: tenantId })),
          section('signed_tree_head', this.signedHead(tenantId)),
          section('policy_template', this.d.policy.getTenantPolicy({ tenant_id: tenantId })),
          section('anchor', this.d.anchor.status({ tenant_id: tenantId, requested_chain: requestedChain })),
          this.d.merkle.getVerifierKey({ tenant_id: tenantId }).then(
            (k) => k.vkey,
            () => null,
          ),
        ]);
        if (unavailable.length === PUBLIC_SECTIONS.length) throw failures[0];
        const a = anchor?.last_anchor;
        return {
          policy_template: policy ? policy.policy_template || 'general' : null,
          decisions: countsOut ? decisionTotals(countsOut.counts) : null,
          chain: verify ? { valid: verify.valid, record_count: verify.record_count } : null,
          signed_tree_head: head,
          verifier_key: head ? vkey : null,
          anchor: a
            ? {
                network: a.network,
                chain_id: a.chain_id,
                contract_address: a.contract_address,
                tx_hash: a.tx_hash,
                block_number: a.block_number,
                anchored_at: a.anchored_at,
                merkle_root: a.aggregate_root,
                tenant_root: a.tenant_root,
                tree_size: a.tree_size,
                explorer_tx_url: a.explorer_tx_url || null,
              }
            : null,
          unavailable: PUBLIC_SECTIONS.filter((n) => unavailable.includes(n)),
          generated_at: new Date().toISOString(),
        };
      },
      (page) => page.unavailable.length === 0,
    );
  }
}

/** Counts by UTC day, and totals of today, the last 7 and the last 30 days. */
function decisionTotals(rows: readonly { day: string; decision: string; count: number | string }[]): NonNullable<PublicAggregate['decisions']> {
  const byDay = new Map<string, Record<string, number>>();
  for (const c of rows) byDay.set(c.day, { ...(byDay.get(c.day) ?? {}), [c.decision]: Number(c.count) });
  const daily = [...byDay.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([date, c]) => ({ date, counts: c }));
  const today: Record<string, number> = {};
  const week: Record<string, number> = {};
  const month: Record<string, number> = {};
  for (const { date, counts: c } of daily) {
    add(month, c);
    if (date >= dayString(6)) add(week, c);
    if (date === dayString(0)) add(today, c);
  }
  return { period_days: PERIOD_DAYS, totals: { today, last_7_days: week, last_30_days: month }, daily };
}
