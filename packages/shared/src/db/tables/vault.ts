/**
 * Tables owned by the vault service (migration 20261121_0006_vault). No column ever holds a secret in
 * plaintext: keys live in the HSM (only their labels are here), credential values are AES-256-GCM
 * ciphertext sealed by a tenant key inside the HSM.
 */
import type { ColumnType, Generated, JSONColumnType } from 'kysely';

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;

/** Registry of HSM keys by label: purpose `pii_subject` | `credentials` | `subject_hmac`. */
export interface VaultKeysTable {
  tenant_id: string;
  /** the key's label in the HSM (CKA_LABEL / Transit key name) */
  key_id: string;
  purpose: string;
  subject_id: string | null;
  backend: string;
  created_at: Timestamp;
  destroyed_at: Date | null;
}

/** Data subjects whose PII is encrypted under their own key; erased_at set by crypto-shredding. */
export interface VaultSubjectsTable {
  tenant_id: string;
  subject_id: string;
  key_id: string;
  /** explicit (from a subject field) or derived (keyed hash of an identifier) */
  source: string;
  pii_kinds: JSONColumnType<string[]>;
  created_at: Timestamp;
  erased_at: Date | null;
}

/** Which actions' stored params carry a subject's envelopes (records_affected on erasure). */
export interface VaultSubjectActionsTable {
  tenant_id: string;
  subject_id: string;
  action_id: string;
  created_at: Timestamp;
}

export interface VaultCredentialsTable {
  id: string;
  tenant_id: string;
  tool_id: string;
  name: string;
  credential_type: string;
  upstream_url: string | null;
  upstream_method: string;
  header_name: string | null;
  key_id: string;
  /** {alg, iv, ct, tag} base64: the value sealed by the tenant's credentials key in the HSM */
  sealed: JSONColumnType<Record<string, string>>;
  registered_at: Timestamp;
}

export interface VaultCredentialAccessTable {
  id: Generated<number>;
  tenant_id: string;
  at: Timestamp;
  agent_id: string;
  tool_id: string;
  credential_name: string;
  action_id: string | null;
  origin: string;
  outcome: string;
  status_code: number | null;
  hsm_fetch_ms: number | null;
  execution_ms: number | null;
  error: string | null;
}

export interface VaultTables {
  vault_keys: VaultKeysTable;
  vault_subjects: VaultSubjectsTable;
  vault_subject_actions: VaultSubjectActionsTable;
  vault_credentials: VaultCredentialsTable;
  vault_credential_access: VaultCredentialAccessTable;
  federation_upstreams: FederationUpstreamsTable;
  federation_tools: FederationToolsTable;
  federation_retained_tools: FederationRetainedToolsTable;
  federation_oauth_grants: FederationOauthGrantsTable;
  federation_oauth_pending: FederationOauthPendingTable;
}

/** A connection of an upstream that needs OAuth: its tokens sealed in the HSM (migration 20261216_0038). */
export interface FederationOauthGrantsTable {
  tenant_id: string;
  upstream: string;
  /** '' for the shared connection, the human's id for a per_user one */
  user_id: Generated<string>;
  key_id: string;
  /** {access_token, refresh_token?} as JSON, sealed by the tenant's credentials key */
  sealed: JSONColumnType<Record<string, string>>;
  scope: string | null;
  expires_at: Date | null;
  /** the human who connected it */
  connected_by: string | null;
  connected_at: Timestamp;
  refreshed_at: Date | null;
}

/** An authorization started and not finished, keyed by the SHA-256 of its state (single use). */
export interface FederationOauthPendingTable {
  state_sha256: string;
  tenant_id: string;
  upstream: string;
  user_id: Generated<string>;
  requested_by: string;
  binding_sha256: string;
  redirect_uri: string;
  key_id: string;
  /** the PKCE code verifier, sealed */
  sealed: JSONColumnType<Record<string, string>>;
  expires_at: Date;
}

/** A tenant's upstream MCP server (migration 20261128_0017_federation; docs/federation.md). */
export interface FederationUpstreamsTable {
  tenant_id: string;
  name: string;
  url: string;
  /** streamable_http | sse */
  transport: string;
  description: string | null;
  /** none | bearer | header | oauth_client_credentials | oauth */
  credential_type: string;
  /** what of the credential is no secret: header_name, token_url, client_id, scope */
  credential_meta: JSONColumnType<Record<string, string>>;
  key_id: string | null;
  /** the secret (bearer or header value, client secret) sealed by the tenant's credentials key in the HSM */
  sealed: JSONColumnType<Record<string, string> | null>;
  /** {include?: glob[], exclude?: glob[]} */
  tool_filter: JSONColumnType<{ include?: string[]; exclude?: string[] }>;
  /** auto | manual (the tenant setting upstream_tool_approval, as last told) */
  tool_approval: string;
  /** the upstream's call timeout (null: FEDERATION_CALL_TIMEOUT_MS) */
  timeout_ms: number | null;
  /** connected | error | needs_authorization */
  status: string;
  status_reason: string | null;
  /** {name, version, protocol_version} of the upstream's initialize answer */
  server_info: JSONColumnType<Record<string, string>>;
  created_at: Timestamp;
  refreshed_at: Date | null;
  /** shared | per_user (an upstream that needs OAuth: one connection for the tenant, or one per human) */
  connection: Generated<string>;
}

/** One tool of an upstream: its pinned definition and, while quarantined, the candidate. */
export interface FederationToolsTable {
  tenant_id: string;
  upstream: string;
  name: string;
  /** active | quarantined | absent */
  state: string;
  /** quarantined: tool_definition_changed | suspicious_description | approval_required */
  reason: string | null;
  markers: JSONColumnType<Array<{ rule: string; path: string; excerpt: string }>>;
  /** json, not jsonb: the definition as the upstream wrote it, its key order included (migration 0033) */
  pinned: JSONColumnType<Record<string, unknown> | null>;
  pinned_sha256: string | null;
  /** json, like `pinned` */
  candidate: JSONColumnType<Record<string, unknown> | null>;
  candidate_sha256: string | null;
  first_seen_at: Timestamp;
  updated_at: Timestamp;
  approved_at: Date | null;
  approved_by: string | null;
}

/**
 * A tool of a deleted upstream kept for its name: its pin or its quarantine, as it was when the upstream
 * was deleted (migration 20261209_0031_federation_retained_tools; docs/federation.md, "Pins outlive deletion").
 */
export interface FederationRetainedToolsTable extends Omit<FederationToolsTable, 'first_seen_at' | 'updated_at'> {
  first_seen_at: Date;
  updated_at: Date;
  retained_at: Timestamp;
}
