import { type Kysely, sql } from 'kysely';

/**
 * Platform-native approvals of managed sessions (docs/managed.md, "Tools that ask a human"):
 * - approvals.platform_tool_use_id: the external platform's tool-use event id of an action queued from a
 *   session's confirmation request (queue_reason `platform_confirmation`);
 * - managed_tool_confirmations: owned by the managed service, one row per confirmation request the
 *   platform raised: what was answered (`allow`/`deny` and the message) and whether the answer reached the
 *   platform. Unique per (session, tool use), so an event seen twice is handled once.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE approvals ADD COLUMN IF NOT EXISTS platform_tool_use_id text;
    CREATE TABLE IF NOT EXISTS managed_tool_confirmations (
      tenant_id uuid NOT NULL,
      action_id uuid NOT NULL,
      session_id uuid NOT NULL,
      tool_use_id text NOT NULL,
      tool_name text NOT NULL,
      state text NOT NULL DEFAULT 'awaiting' CHECK (state IN ('awaiting', 'sent', 'undeliverable')),
      result text CHECK (result IN ('allow', 'deny')),
      reason text,
      message text,
      created_at timestamptz NOT NULL DEFAULT now(),
      sent_at timestamptz,
      PRIMARY KEY (tenant_id, action_id),
      UNIQUE (session_id, tool_use_id)
    );
    CREATE INDEX IF NOT EXISTS managed_tool_confirmations_open ON managed_tool_confirmations (created_at) WHERE state = 'awaiting';
  `.execute(db);
}
