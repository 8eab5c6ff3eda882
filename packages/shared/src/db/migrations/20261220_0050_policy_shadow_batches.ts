import { type Kysely, sql } from 'kysely';

/**
 * A shadow's decisions kept per batch (docs/policy.md, "Shadow rollout"; issue 47's cost bound): every call
 * a candidate decided is one element of its batch's arrays (action id, live and candidate decision, both
 * evaluation times), one row per batch instead of one per call, so keeping a shadow costs Postgres one
 * tuple per batch. Calls whose outcome differs from the live one (decision or violations) keep their full
 * row in `policy_shadow_decisions` as before (the samples and the rules behind the differences); a call
 * that agreed has the live record's violations, so nothing else is needed to know what the candidate said.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE policy_shadow_batches (
      shadow_id uuid NOT NULL REFERENCES policy_shadows (shadow_id) ON DELETE CASCADE,
      tenant_id uuid NOT NULL,
      batch_id uuid NOT NULL,
      decided_at timestamptz NOT NULL,
      action_ids uuid[] NOT NULL,
      live_decisions text[] NOT NULL,
      candidate_decisions text[] NOT NULL,
      live_eval_ms real[] NOT NULL,
      candidate_eval_ms real[] NOT NULL,
      PRIMARY KEY (shadow_id, batch_id)
    );
    INSERT INTO policy_shadow_batches (shadow_id, tenant_id, batch_id, decided_at, action_ids, live_decisions, candidate_decisions, live_eval_ms, candidate_eval_ms)
      SELECT shadow_id, tenant_id, gen_random_uuid(), max(decided_at), array_agg(action_id ORDER BY action_id), array_agg(live_decision ORDER BY action_id),
             array_agg(candidate_decision ORDER BY action_id), array_agg(live_eval_ms::real ORDER BY action_id), array_agg(candidate_eval_ms::real ORDER BY action_id)
      FROM policy_shadow_decisions GROUP BY shadow_id, tenant_id;
    DELETE FROM policy_shadow_decisions WHERE NOT differs AND live_violations @> candidate_violations AND candidate_violations @> live_violations;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE policy_shadow_batches`.execute(db);
}
