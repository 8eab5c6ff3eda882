/** Tables owned by the managed service: agent configs, sessions on the external platform, platform resources. */
import type { ColumnType, JSONColumnType } from 'kysely';
import type { Defaulted } from './columns';

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
/** a column with a database default: optional on insert */

export interface ManagedAgentConfigsTable {
  id: string;
  tenant_id: string;
  name: string;
  anthropic_model: string;
  system_prompt: string | null;
  allowed_tools: JSONColumnType<string[]>;
  require_human_approval: JSONColumnType<string[]>;
  max_session_hours: Defaulted<number>;
  max_daily_sessions: number | null;
  max_delegation_depth: Defaulted<number>;
  governance_profile: JSONColumnType<Record<string, unknown>>;
  parent_agent_id: string | null;
  /** 0 for a root config, parent's depth + 1 below it */
  depth: Defaulted<number>;
  /** the agent created on the external platform for this config (lazily, at its first session) */
  platform_agent_id: string | null;
  created_at: Timestamp;
}

export type ManagedSessionStatus = 'active' | 'completed' | 'interrupted' | 'failed';

export interface ManagedSessionsTable {
  id: string;
  tenant_id: string;
  /** the managed agent config */
  agent_id: string;
  anthropic_session_id: string | null;
  status: ManagedSessionStatus;
  system_prompt_hash: string;
  mcp_server_url: string;
  platform_vault_id: string | null;
  environment_id: string | null;
  bundle_revision: string | null;
  metadata: JSONColumnType<Record<string, unknown>>;
  created_at: Timestamp;
  expires_at: Timestamp;
  ended_at: Date | null;
  end_reason: string | null;
  interrupt_reason: string | null;
  interrupted_at: Date | null;
  auto_triggered: Defaulted<boolean>;
  interrupt_action_id: string | null;
  /** pending | connected | reconnecting | stopped | idle_timeout */
  consumer_status: Defaulted<string>;
  /** the managed replica holding the stream lease */
  consumer_owner: string | null;
  consumer_lease_until: Date | null;
  connected_since: Date | null;
  events_processed: Defaulted<number>;
  last_event_id: string | null;
  last_activity_at: Date | null;
  max_anomaly_score: Defaulted<number>;
}

export interface ManagedPlatformResourcesTable {
  key: string;
  platform_id: string;
  created_at: Timestamp;
}

/** A confirmation request of a session's platform (migration 0021): what it was answered, and whether that arrived. */
export interface ManagedToolConfirmationsTable {
  tenant_id: string;
  /** the governed action: the approval queue's item, and every audit record of this call */
  action_id: string;
  session_id: string;
  /** the platform's `agent.mcp_tool_use` event id (`user.tool_confirmation.tool_use_id`) */
  tool_use_id: string;
  tool_name: string;
  /** awaiting (no answer sent yet) | sent | undeliverable (the platform refused it: the session is gone) */
  state: Defaulted<'awaiting' | 'sent' | 'undeliverable'>;
  result: 'allow' | 'deny' | null;
  /** approved | rejected | expired | policy_deny | not_escalated */
  reason: string | null;
  message: string | null;
  created_at: Defaulted<Date>;
  sent_at: Date | null;
}

export interface ManagedTables {
  managed_tool_confirmations: ManagedToolConfirmationsTable;
  managed_agent_configs: ManagedAgentConfigsTable;
  managed_sessions: ManagedSessionsTable;
  managed_platform_resources: ManagedPlatformResourcesTable;
}
