/**
 * The response shapes the console reads, taken from the gateway's route handlers (services/gateway/src/
 * http/routes). Used with `as` where the OpenAPI document does not describe a body yet (lib/api.ts).
 */
import type { components, paths } from '../generated/openapi';

/** The 200 JSON body of an operation, from the generated OpenAPI types. */
type JsonOf<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends { responses: { 200: { content: { 'application/json': infer T } } } } ? T : never;

export interface Me {
  tenant_id: string;
  tenant_slug: string | null;
  tenant_name: string | null;
  auth_method: string;
  user_id: string | null;
  email: string | null;
  is_admin: boolean;
}

export interface LoginResult {
  access_token: string;
  token_type: string;
  expires_in: number;
}

export interface SignupResult {
  tenant_id: string;
  api_key: string;
  slug: string;
  [k: string]: unknown;
}

export interface ApprovalItem {
  action_id: string;
  agent_id: string;
  tool: string;
  method: string;
  params: Record<string, unknown>;
  queued_at: string;
  opa_result: { requires_human?: boolean; violations?: string[]; severity?: string };
  queue_reason: string | null;
  session_id?: string;
}

export interface HistoryItem extends ApprovalItem {
  status: 'approved' | 'rejected' | string;
  decided_at: string | null;
  decided_by: string | null;
  note: string | null;
  execution: unknown;
}

/** An audit record as the OpenAPI document describes it (components/schemas/AuditRecord). */
export type AuditRecord = components['schemas']['AuditRecord'];

export interface ChainVerify {
  valid: boolean;
  record_count: number;
  failed_at_action_id?: string;
  failed_at_record_id?: string;
  reason?: string;
}

export interface TreeHead {
  tree_index: number;
  merkle_root: string;
  record_count: number;
  period_start: string;
  period_end: string;
  records_added: number;
  built_by: string;
}

export interface InclusionProof {
  record_hash: string;
  merkle_root: string;
  proof: string[];
  verified: boolean;
  record_id: number;
  leaf_index: number;
  leaf_hash: string;
  tree_index: number;
  tree_size: number;
}

export interface Anchor {
  merkle_root: string;
  tx_hash: string;
  block_number: number;
  anchored_at: string;
  network: string;
  chain_id: number;
  contract_address: string;
  explorer_tx_url: string | null;
  tenant_root: string;
  tree_index: number;
  tree_size: number;
  aggregate_proof: { leaf_hex: string; leaf_index: number; tree_size: number; proof: string[] };
}

export interface AnchorStatus {
  network: string;
  anchor_count: number;
  last_anchor: Anchor | null;
  pending_tree_heads: number;
  explorer_address_url: string | null;
  contract_address: string;
}

/** GET/PATCH /dashboard/settings, as the OpenAPI document describes it (webhook_secret: only in the PATCH answer that saved webhook settings). */
export type Settings = JsonOf<'/dashboard/settings', 'get'> & { webhook_secret?: string };

export interface Template {
  name: string;
  description: string;
  parameters: { name: string; type: string; default: unknown; description: string }[];
}

/** One action replayed under a policy (components/schemas/ReplayResult). */
export type ReplayResult = components['schemas']['ReplayResult'];

/** POST /audit/replay-bulk: the actions replayed, and which decisions would change. */
export type ReplayBulk = JsonOf<'/audit/replay-bulk', 'post'>;

export interface Delivery {
  delivery_id: string;
  event: string;
  action_id: string | null;
  url: string;
  status: string;
  attempts: number;
  test: boolean;
  created_at: string;
  last_status_code: number | null;
  last_error: string | null;
}

export interface SessionRow {
  id: string;
  agent_id: string;
  status: string;
  created_at: string;
  [k: string]: unknown;
}

/** GET /managed/sessions/{session_id}/compliance, as the OpenAPI document describes it. */
export type Compliance = JsonOf<'/managed/sessions/{session_id}/compliance', 'get'>;

/** GET /dashboard/public/{slug} and /transparency/{tenant_id}: a tenant's public report. */
export type PublicDashboardBody = components['schemas']['PublicDashboard'];

/** GET /transparency: a page of publishing tenants. */
export type TransparencyList = JsonOf<'/transparency', 'get'>;

/** An API key by its prefix (GET /api-keys). */
export type ApiKeyInfo = components['schemas']['ApiKeyInfo'];

export type Upstream = components['schemas']['Upstream'];
export type UpstreamTool = components['schemas']['UpstreamTool'];
