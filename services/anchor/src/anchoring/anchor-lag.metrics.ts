/**
 * How far anchoring is behind, read from Postgres at scrape time (every replica reports the same fleet-wide
 * numbers; use max() across replicas; NaN when Postgres does not answer): the tree heads received and not yet anchored, and the age of the
 * oldest of them (0 when none is pending). With hourly anchoring the age stays under about an hour; the
 * alert AgwAnchoringBehind fires past two hours.
 */
import { type Db, Gauge, type Registry } from '@agw/shared';
import { sql } from 'kysely';

export function registerAnchorLagGauges(registry: Registry, db: Db): void {
  let last: { at: number; value: Promise<{ pending: number; age: number }> } | undefined;
  // one query per scrape for both gauges
  const read = () => {
    if (!last || Date.now() - last.at > 1000) {
      last = {
        at: Date.now(),
        value: sql<{ pending: string; age: number | string | null }>`
          SELECT count(*) AS pending, EXTRACT(EPOCH FROM now() - min(received_at)) AS age
          FROM anchor_tree_heads WHERE batch_id IS NULL`
          .execute(db)
          .then((r) => ({ pending: Number(r.rows[0]?.pending ?? 0), age: Math.max(0, Number(r.rows[0]?.age ?? 0)) })),
      };
    }
    return last.value;
  };
  new Gauge({
    name: 'agw_anchor_tree_heads_pending',
    help: 'Tenant tree heads received and not yet anchored, over all tenants',
    registers: [registry],
    async collect() {
      this.set(await read().then((s) => s.pending, () => Number.NaN));
    },
  });
  new Gauge({
    name: 'agw_anchor_oldest_pending_tree_head_age_seconds',
    help: 'Age of the oldest tree head not yet anchored (0 when none is pending)',
    registers: [registry],
    async collect() {
      this.set(await read().then((s) => s.age, () => Number.NaN));
    },
  });
}
