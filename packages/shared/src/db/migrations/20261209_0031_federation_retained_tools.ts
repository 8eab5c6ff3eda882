import { type Kysely, sql } from 'kysely';

/**
 * Pins outlive the deletion of an upstream (docs/federation.md, "Pins outlive deletion"; issue 42, item 6).
 *
 * `DELETE /api/upstreams/{name}` moves the tools of the upstream that carry a pinned definition or a
 * quarantine here, as they were (state, reason, markers, pinned and candidate definitions, who approved
 * them), and removes the upstream with the rest of its tools. Registering the same name again moves them
 * back into `federation_tools` in the registration's transaction (an `active` one comes back `absent` until
 * the upstream offers it again), so its first read compares the upstream's tools with those pins: a
 * changed tool is quarantined `tool_definition_changed`, never made active. A signed-in human may discard
 * them (`DELETE /api/upstreams/{name}?discard_pins=true`).
 *
 * A table of its own rather than tool rows left without their upstream: `federation_tools` keeps its
 * foreign key (a tool belongs to a registered upstream, which every query of it assumes), and what is kept
 * for a deleted name is visible as such.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE federation_retained_tools (
      tenant_id uuid NOT NULL,
      upstream text NOT NULL,
      name text NOT NULL,
      state text NOT NULL,
      reason text,
      markers jsonb NOT NULL DEFAULT '[]'::jsonb,
      pinned jsonb,
      pinned_sha256 text,
      candidate jsonb,
      candidate_sha256 text,
      first_seen_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      approved_at timestamptz,
      approved_by text,
      retained_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (tenant_id, upstream, name)
    );
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE federation_retained_tools`.execute(db);
}
