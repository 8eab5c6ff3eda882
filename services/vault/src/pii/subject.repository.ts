/** The only queries on vault_subjects and vault_subject_actions. Tenant id first, always. */
import type { Db } from '@agw/shared';
import { sql } from 'kysely';

export interface SubjectRow {
  subject_id: string;
  key_id: string;
  source: string;
  pii_kinds: string[];
  created_at: Date;
  erased_at: Date | null;
  action_count: number;
}

const subjectColumns = ['subject_id', 'key_id', 'source', 'pii_kinds', 'created_at', 'erased_at'] as const;

export class SubjectRepository {
  constructor(private readonly db: Db) {}

  /** Record the subject (first sighting) and merge the kinds of PII seen for it. */
  async upsert(tenantId: string, s: { subject_id: string; key_id: string; source: string; pii_kinds: string[] }): Promise<void> {
    await this.db
      .insertInto('vault_subjects')
      .values({ tenant_id: tenantId, subject_id: s.subject_id, key_id: s.key_id, source: s.source, pii_kinds: JSON.stringify(s.pii_kinds) })
      .onConflict((oc) =>
        oc.columns(['tenant_id', 'subject_id']).doUpdateSet({
          pii_kinds: sql`(SELECT coalesce(jsonb_agg(DISTINCT k ORDER BY k), '[]'::jsonb) FROM jsonb_array_elements_text(vault_subjects.pii_kinds || excluded.pii_kinds) AS k)`,
        }),
      )
      .execute();
  }

  async linkAction(tenantId: string, subjectIds: string[], actionId: string): Promise<void> {
    if (!subjectIds.length) return;
    await this.db
      .insertInto('vault_subject_actions')
      .values(subjectIds.map((subject_id) => ({ tenant_id: tenantId, subject_id, action_id: actionId })))
      .onConflict((oc) => oc.doNothing())
      .execute();
  }

  /** The tenant's subjects with the number of actions that carry their data (one correlated count). */
  private subjectsWithActionCount(tenantId: string) {
    return this.db
      .selectFrom('vault_subjects')
      .select(subjectColumns)
      .select((eb) =>
        eb
          .selectFrom('vault_subject_actions as a')
          .select(eb.fn.countAll<number>().as('n'))
          .whereRef('a.tenant_id', '=', 'vault_subjects.tenant_id')
          .whereRef('a.subject_id', '=', 'vault_subjects.subject_id')
          .as('action_count'),
      )
      .where('tenant_id', '=', tenantId);
  }

  async get(tenantId: string, subjectId: string): Promise<SubjectRow | undefined> {
    const row = await this.subjectsWithActionCount(tenantId)
      .where('subject_id', '=', subjectId)
      .executeTakeFirst();
    return row ? { ...row, action_count: Number(row.action_count ?? 0) } : undefined;
  }

  /** Which of these subjects are erased (one query for a whole params object). */
  async erasedAmong(tenantId: string, subjectIds: string[]): Promise<Set<string>> {
    if (!subjectIds.length) return new Set();
    const rows = await this.db
      .selectFrom('vault_subjects')
      .select('subject_id')
      .where('tenant_id', '=', tenantId)
      .where('subject_id', 'in', subjectIds)
      .where('erased_at', 'is not', null)
      .execute();
    return new Set(rows.map((r) => r.subject_id));
  }

  async list(tenantId: string, limit = 1000): Promise<SubjectRow[]> {
    const rows = await this.subjectsWithActionCount(tenantId)
      .orderBy('created_at', 'desc')
      .limit(limit)
      .execute();
    return rows.map((r) => ({ ...r, action_count: Number(r.action_count ?? 0) }));
  }

  async actionIds(tenantId: string, subjectId: string): Promise<string[]> {
    const rows = await this.db
      .selectFrom('vault_subject_actions')
      .select('action_id')
      .where('tenant_id', '=', tenantId)
      .where('subject_id', '=', subjectId)
      .orderBy('created_at')
      .execute();
    return rows.map((r) => r.action_id);
  }

  async markErased(tenantId: string, subjectId: string): Promise<Date> {
    const row = await this.db
      .updateTable('vault_subjects')
      .set({ erased_at: sql<Date>`coalesce(erased_at, now())` })
      .where('tenant_id', '=', tenantId)
      .where('subject_id', '=', subjectId)
      .returning('erased_at')
      .executeTakeFirstOrThrow();
    return row.erased_at!;
  }
}
