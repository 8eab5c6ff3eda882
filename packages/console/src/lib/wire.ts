/**
 * The response shapes the console reads: every one from the types generated from the gateway's OpenAPI
 * document (scripts/generate-client.mjs), so they cannot drift from what the API answers.
 */
import type { components, paths } from '../generated/openapi';

/** The 200 JSON body of an operation, from the generated OpenAPI types. */
type JsonOf<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends { responses: { 200: { content: { 'application/json': infer T } } } } ? T : never;
/** The 201 JSON body of an operation. */
type CreatedOf<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends { responses: { 201: { content: { 'application/json': infer T } } } } ? T : never;

/** GET /auth/me. */
export type Me = JsonOf<'/auth/me', 'get'>;

/** POST /auth/login. */
export type LoginResult = JsonOf<'/auth/login', 'post'>;

/** POST /auth/signup (201). */
export type SignupResult = CreatedOf<'/auth/signup', 'post'>;

/** A pending action of the approval queue (components/schemas/ApprovalQueueItem). */
export type ApprovalItem = components['schemas']['ApprovalQueueItem'];

/** Why an action waits in the queue (GET /approvals?queue_reason=). */
export type ApprovalReason = NonNullable<NonNullable<paths['/approvals']['get']['parameters']['query']>['queue_reason']>;

/** A decided action (GET /approvals/history). */
export type HistoryItem = JsonOf<'/approvals/history', 'get'>['history'][number];

/** An audit record as the OpenAPI document describes it (components/schemas/AuditRecord). */
export type AuditRecord = components['schemas']['AuditRecord'];

/** GET /audit/verify: valid, or where it broke (`failed_at_record_id` is the tenant's record id, a number). */
export type ChainVerify = JsonOf<'/audit/verify', 'get'>;

/** One tenant tree head (GET /audit/merkle/roots). */
export type TreeHead = JsonOf<'/audit/merkle/roots', 'get'>['trees'][number];

/** GET /audit/merkle/proof/{record_hash}. */
export type InclusionProof = JsonOf<'/audit/merkle/proof/{record_hash}', 'get'>;

/** GET /anchor/status, and its last anchor. */
export type AnchorStatus = JsonOf<'/anchor/status', 'get'>;
export type Anchor = NonNullable<AnchorStatus['last_anchor']>;

/** GET/PATCH /dashboard/settings, as the OpenAPI document describes it (webhook_secret: only in the PATCH answer that saved webhook settings). */
export type Settings = JsonOf<'/dashboard/settings', 'get'> & { webhook_secret?: string };

/** One policy template (GET /policy/templates). */
export type Template = JsonOf<'/policy/templates', 'get'>['templates'][number];

/** One action replayed under a policy (components/schemas/ReplayResult). */
export type ReplayResult = components['schemas']['ReplayResult'];

/** POST /audit/replay-bulk: the actions replayed, and which decisions would change. */
export type ReplayBulk = JsonOf<'/audit/replay-bulk', 'post'>;

/** GET /policy/shadow: the running (or last) shadow of a candidate policy (components/schemas/ShadowReport). */
export type ShadowReport = components['schemas']['ShadowReport'];

/** GET /policy/bundle-source: the tenant's OPA bundle source and its last poll (components/schemas/BundleSource). */
export type BundleSource = components['schemas']['BundleSource'];

/** One webhook delivery (GET /webhooks/deliveries). */
export type Delivery = JsonOf<'/webhooks/deliveries', 'get'>['deliveries'][number];

/** One managed session (GET /managed/sessions). */
export type SessionRow = JsonOf<'/managed/sessions', 'get'>['sessions'][number];

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
