/** Tables owned by the gateway (control plane): tenants, users, API keys, settings, approvals. */
import type { ColumnType, Generated, JSONColumnType } from 'kysely';
import type { ActionCallColumns, OptionalNull } from './columns';

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;

export interface TenantsTable {
  id: string;
  slug: string;
  name: string;
  created_at: Timestamp;
}

export interface UsersTable {
  id: string;
  tenant_id: string;
  email: string;
  /** scrypt$N$r$p$salt$hash, never the password */
  password_hash: string | null;
  email_verified: boolean;
  github_id: string | null;
  is_admin: boolean;
  /** the member's role in its tenant (docs/auth.md, "Members, invitations and roles") */
  role: ColumnType<MemberRole, MemberRole | undefined, MemberRole>;
  created_at: Timestamp;
}

export type MemberRole = 'owner' | 'admin' | 'policy_author' | 'approver' | 'auditor' | 'viewer';

export interface MemberInvitationsTable {
  id: string;
  tenant_id: string;
  email: string;
  role: MemberRole;
  /** SHA-256 of the single-use token (the token itself is never stored) */
  token_hash: string;
  invited_by: string;
  created_at: Timestamp;
  expires_at: Timestamp;
  accepted_at: Timestamp | null;
}

export interface ApiKeysTable {
  id: string;
  tenant_id: string;
  /** SHA-256 hex of the key; the key itself is shown once and never stored */
  key_hash: string;
  /** first characters of the key, to tell keys apart in a listing */
  key_prefix: string;
  created_at: Timestamp;
  revoked_at: Date | null;
  /** 'tenant' (every endpoint: the spec's key) or 'agent' (tool calls, MCP server, its own actions' status) */
  scope: ColumnType<'tenant' | 'agent', 'tenant' | 'agent' | undefined, 'tenant' | 'agent'>;
  name: OptionalNull<string>;
  /** who issued it: `user:<email>` or `api_key:<prefix>`; null for keys issued at sign-up or rotation */
  created_by: OptionalNull<string>;
}

export interface TenantSettingsTable {
  tenant_id: string;
  settings: JSONColumnType<Record<string, unknown>>;
  updated_at: Timestamp;
}

export interface ApprovalsTable extends ActionCallColumns {
  /** params as stored (PII already encrypted per subject) */
  params: JSONColumnType<Record<string, unknown>>;
  opa_result: JSONColumnType<{ requires_human: boolean; violations: string[]; severity: string }>;
  /** why it was queued: one of QUEUE_REASONS (approvals/approval.repository.ts) */
  queue_reason: string;
  status: 'pending' | 'approved' | 'rejected' | 'expired';
  queued_at: Timestamp;
  decided_at: Date | null;
  decided_by: string | null;
  note: string | null;
  execution: JSONColumnType<Record<string, unknown>> | null;
  /** SHA-256 of the RFC 8785 params as the agent sent them (paramsSha256 in action-record.ts); null for actions queued before migration 20261126_0013 */
  params_sha256: OptionalNull<string>;
  /** the policy bundle revision the action was evaluated under */
  bundle_revision: OptionalNull<string>;
  /** SHA-256 of the API key that made the call (an agent key reads the status of its own actions only) */
  requested_by_key: OptionalNull<string>;
  /** after this the action is `expired` (tenant setting approval_expiry_seconds, default 24 h) */
  expires_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** the ApprovalBinding (action-record.ts) of the decision */
  decision_binding: ColumnType<Record<string, unknown> | null, string | null | undefined, string | null>;
  /** when the agent's retry of this approved agent_direct action was allowed (one retry per approval) */
  retried_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** queue_reason platform_confirmation (migration 0021): the external platform's tool-use event id */
  platform_tool_use_id: OptionalNull<string>;
  /** four eyes (migration 0036): how many distinct members must approve (1: one decision, as before) */
  required_approvers: ColumnType<number, number | undefined, number>;
  /** the member whose console session made the call (never counts as an approver); null for machine credentials */
  initiator_user_id: OptionalNull<string>;
  /** the human the call acted for (migration 0041): an approved call of a per_user upstream runs with their connection */
  acts_for_user_id: OptionalNull<string>;
}

/** One member's approval of a four-eyes action (migration 0036): unique per (action, member). */
export interface ApprovalVotesTable {
  action_id: string;
  tenant_id: string;
  member_id: string;
  member_email: string;
  note: string | null;
  voted_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

/** Decision events not yet on the bus (publish failed); relayed by the gateway (events/decision-publisher.ts). */
export interface EventOutboxTable {
  id: Generated<number>;
  subject: string;
  event: JSONColumnType<Record<string, unknown>>;
  created_at: Timestamp;
  attempts: ColumnType<number, number | undefined, number>;
  last_error: string | null;
  /** the service whose relay publishes the row (migration 0024; 'audit' when an append function of the chain wrote it) */
  owner: ColumnType<string, string | undefined, string>;
}

/** OAuth 2.1 for the MCP endpoints (migration 0018): dynamically registered public clients. */
export interface OauthClientsTable {
  client_id: string;
  /** the RFC 7591 client metadata as registered (no secret: public clients only) */
  metadata: JSONColumnType<Record<string, unknown>>;
  created_at: Timestamp;
}

/** An authorization request waiting for a signed-in human's consent. */
export interface OauthAuthorizationRequestsTable {
  id: string;
  client_id: string;
  redirect_uri: string;
  state: string | null;
  scopes: string[];
  code_challenge: string;
  resource: string;
  created_at: Timestamp;
  expires_at: Timestamp;
  decided_at: Timestamp | null;
  /** the request carried a redirect_uri: the token request must carry the same (migration 0030) */
  redirect_uri_sent: Generated<boolean>;
}

/** A tenant's consent: one client acting as one agent identity with these scopes, on one resource. */
export interface OauthGrantsTable {
  id: string;
  tenant_id: string;
  client_id: string;
  agent_name: string;
  scopes: string[];
  resource: string;
  granted_by: string;
  /** the user whose consent made the grant: the grant goes with the user's row (migration 0032); null for a grant older than the link that names no user */
  granted_by_user_id: OptionalNull<string>;
  created_at: Timestamp;
  revoked_at: Timestamp | null;
  /** the absolute end of the grant: no token of it outlives this (migration 0030) */
  expires_at: Timestamp;
  /** an access token of it last used (written at most once a minute) */
  last_used_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

export interface OauthCodesTable {
  /** SHA-256 hex of the code */
  code_hash: string;
  grant_id: string;
  client_id: string;
  redirect_uri: string;
  code_challenge: string;
  expires_at: Timestamp;
  used_at: Timestamp | null;
  redirect_uri_sent: Generated<boolean>;
}

export interface OauthTokensTable {
  /** SHA-256 hex of the token */
  token_hash: string;
  kind: 'access' | 'refresh';
  grant_id: string;
  expires_at: Timestamp;
  created_at: Timestamp;
  revoked_at: Timestamp | null;
}

/** A console refresh token (migration 0019): rotated on every use, a reused one revokes its family. */
export interface ConsoleRefreshTokensTable {
  /** SHA-256 hex of the token */
  token_hash: string;
  family_id: string;
  tenant_id: string;
  user_id: string;
  created_at: Timestamp;
  expires_at: Timestamp;
  used_at: Timestamp | null;
  revoked_at: Timestamp | null;
}

/** A tenant's OpenID Connect provider (docs/auth.md, "Single sign-on (OIDC)"). */
export interface TenantSsoTable {
  tenant_id: string;
  issuer: string;
  client_id: string;
  /** the vault's sealed form (purpose sso_client_secret); the secret is never stored in clear */
  client_secret_sealed: string;
  default_role: Exclude<MemberRole, 'owner'>;
  groups_claim: string | null;
  group_roles: JSONColumnType<Record<string, Exclude<MemberRole, 'owner'>>, string, string>;
  require_sso: boolean;
  updated_by: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** An e-mail domain bound to one tenant's SSO. */
export interface TenantSsoDomainsTable {
  domain: string;
  tenant_id: string;
}

export interface CoreTables {
  tenant_sso: TenantSsoTable;
  tenant_sso_domains: TenantSsoDomainsTable;
  console_refresh_tokens: ConsoleRefreshTokensTable;
  oauth_clients: OauthClientsTable;
  oauth_authorization_requests: OauthAuthorizationRequestsTable;
  oauth_grants: OauthGrantsTable;
  oauth_codes: OauthCodesTable;
  oauth_tokens: OauthTokensTable;
  event_outbox: EventOutboxTable;
  tenants: TenantsTable;
  users: UsersTable;
  member_invitations: MemberInvitationsTable;
  api_keys: ApiKeysTable;
  tenant_settings: TenantSettingsTable;
  approvals: ApprovalsTable;
  approval_votes: ApprovalVotesTable;
}

export type { Generated };
