/**
 * Who may call what (docs/auth.md, "Members, invitations and roles"): ONE table of every operation of the
 * OpenAPI document (method + path) -> the roles of a tenant's members that may call it. `roleGuard` applies
 * it to signed-in humans (a session token from a log-in) after authentication and the key-scope check and
 * before any route runs; a request the table does not name (a method or path no route takes) is the
 * owner's alone, so a route added later is closed to every other role until it is listed here (and the
 * test `permissions.test.ts` fails while an operation of the document is missing).
 *
 * Machine credentials keep their own rules: the tenant API key (and a session token `POST /auth/session`
 * made from it) acts as the owner (it is the credential the owner received at sign-up and can rotate; a
 * role below it would be empty, since whoever holds it can open an owner's session); agent keys, OAuth
 * tokens of MCP clients and managed sessions' tokens are limited by key-scope.middleware.ts and
 * auth.middleware.ts.
 */
import type { NextFunction, Request, Response } from 'express';
import { ForbiddenError } from '@agw/shared';
import { ROLES, type Role } from '../tenants/roles';

export { ROLES, type Role };

/** Every role: reads of pages that carry no personal data, secret or evidence. */
const EVERYONE: readonly Role[] = ROLES;
/** Reads of records (audit log, subjects, proofs, deliveries): every role but viewer. */
const READERS: readonly Role[] = ['owner', 'admin', 'policy_author', 'approver', 'auditor'];
/** Settings, keys, webhooks, upstreams, credentials, members, managed agents, the tenant's own tool calls. */
const MANAGERS: readonly Role[] = ['owner', 'admin'];
/** The policy (settings' policy keys), its tests (replay) and templates. */
const POLICY: readonly Role[] = ['owner', 'admin', 'policy_author'];
/** Human decisions: approvals, upstream tool approvals, OAuth consent. */
const DECIDERS: readonly Role[] = ['owner', 'admin', 'approver'];
/** Exports and evidence. */
const AUDITORS: readonly Role[] = ['owner', 'admin', 'auditor'];
const OWNER: readonly Role[] = ['owner'];

export interface Permission {
  /** the roles that may call it; 'public' for operations without credentials */
  roles: readonly Role[] | 'public';
  /** what the rule is, for the table in docs/auth.md */
  note?: string;
}

const p = (roles: readonly Role[] | 'public', note?: string): Permission => ({ roles, ...(note ? { note } : {}) });

/** `METHOD /path` (the OpenAPI document's path, relative to /api) -> who may call it. */
export const PERMISSIONS: Readonly<Record<string, Permission>> = {
  // public (no credentials)
  'GET /health': p('public'),
  'GET /metrics': p('public'),
  'GET /openapi.json': p('public'),
  'POST /auth/signup': p('public'),
  'POST /auth/login': p('public'),
  'POST /auth/refresh': p('public'),
  'POST /auth/logout': p('public'),
  'GET /auth/verify-email': p('public'),
  'GET /auth/github': p('public'),
  'GET /auth/github/callback': p('public'),
  'GET /auth/sso/start': p('public', 'single sign-on: redirects to the tenant\'s identity provider'),
  'GET /auth/sso/callback': p('public', 'the provider\'s answer, bound to the browser that started the sign-in, is the credential'),
  'POST /members/invitations/accept': p('public', 'the invitation token is the credential'),
  'GET /dashboard/public': p('public'),
  'GET /dashboard/public/{slug}': p('public'),
  'GET /transparency': p('public'),
  'GET /transparency/{tenant_id}': p('public'),
  'GET /mcp/server/health': p('public'),
  'GET /oauth/authorize': p('public'),
  'POST /oauth/register': p('public'),
  'POST /oauth/token': p('public'),
  'POST /oauth/revoke': p('public'),
  'GET /upstreams/oauth/callback': p('public', 'an upstream authorization server\'s redirect back: the single-use state and the browser\'s binding cookie are the credential'),
  'GET /upstreams/oauth/client-metadata.json': p('public'),

  // who am I
  'GET /auth/me': p(EVERYONE),
  'POST /auth/session': p(EVERYONE, 'a session of the same member, with the same role'),

  // members
  'GET /members': p(EVERYONE),
  'PATCH /members/{id}': p(MANAGERS, 'only an owner grants, changes or removes the owner role'),
  'DELETE /members/{id}': p(MANAGERS, 'only an owner removes an owner; the last owner stays'),
  'GET /members/invitations': p(MANAGERS),
  'POST /members/invitations': p(MANAGERS, 'only an owner invites an owner'),
  'DELETE /members/invitations/{id}': p(MANAGERS),

  // tenants (platform administrators: is_admin, checked by the route)
  'GET /tenants': p(EVERYONE, 'platform administrators only (is_admin), checked by the route'),
  'POST /tenants': p(EVERYONE, 'platform administrators only (is_admin), checked by the route'),
  'GET /tenants/{id}': p(EVERYONE),

  // keys
  'GET /api-keys': p(MANAGERS),
  'POST /api-keys': p(MANAGERS, 'agent-scoped keys only'),
  'DELETE /api-keys/{id}': p(MANAGERS),
  'POST /api-keys/rotate': p(OWNER, 'the tenant key acts as the owner: handing it to an admin would make the admin an owner'),

  // settings and policy
  'GET /dashboard/settings': p(EVERYONE, 'secrets are never in it'),
  'PATCH /dashboard/settings': p(POLICY, 'policy_author: the policy keys only (policy_template, policy_config, custom_policy, override_failing_tests, gateway_constraints)'),
  'POST /dashboard/settings': p(POLICY, 'policy_author: the policy keys only (policy_template, policy_config, custom_policy, override_failing_tests, gateway_constraints)'),
  'GET /settings/sso': p(MANAGERS, 'the client secret is never in it'),
  'PUT /settings/sso': p(MANAGERS),
  'DELETE /settings/sso': p(MANAGERS),
  'GET /policy/rules': p(EVERYONE),
  'GET /policy/templates': p(EVERYONE),
  'PUT /policy/bundle-source': p(POLICY, "the tenant's signed OPA bundles become its policy"),
  'GET /policy/bundle-source': p(READERS),
  'DELETE /policy/bundle-source': p(POLICY),
  'POST /policy/bundle-source/poll': p(POLICY),
  'GET /policy/shadow': p(READERS, 'the shadow report: decisions and rules, no params'),
  'PUT /policy/shadow': p(POLICY, 'puts a candidate policy in shadow'),
  'DELETE /policy/shadow': p(POLICY),
  'POST /policy/shadow/promote': p(POLICY, 'makes the candidate live (tests gate and override as PATCH /dashboard/settings)'),
  'POST /policy/test': p(['owner', 'admin', 'policy_author', 'auditor'], 'runs a candidate policy\'s test_* rules, saves nothing'),
  'GET /bundles/gateway/status': p(EVERYONE),
  'POST /audit/replay': p(['owner', 'admin', 'policy_author', 'auditor'], 'a policy test: re-evaluates a recorded call, changes nothing'),
  'POST /audit/replay-bulk': p(['owner', 'admin', 'policy_author', 'auditor'], 'a policy test: re-evaluates recorded calls, changes nothing'),

  // approvals
  'GET /approvals': p(EVERYONE),
  'GET /approvals/history': p(EVERYONE),
  'GET /actions/{action_id}': p(EVERYONE),
  'POST /approve/{action_id}': p(DECIDERS, 'and a signed-in human where approvals_require_human is on'),
  'POST /reject/{action_id}': p(DECIDERS, 'and a signed-in human where approvals_require_human is on'),

  // tool calls and MCP (agents use keys; a human calling a tool acts for the tenant)
  'POST /mcp/tools/call': p(MANAGERS),
  'POST /mcp/server': p(MANAGERS),
  'POST /mcp/server/sessions/{session_id}': p(MANAGERS),
  'POST /mcp/server/upstreams/{name}': p(MANAGERS),

  // upstream MCP servers
  'GET /upstreams': p(EVERYONE),
  'GET /upstreams/{name}': p(EVERYONE),
  'GET /upstreams/{name}/tools': p(EVERYONE),
  'POST /upstreams': p(MANAGERS),
  'DELETE /upstreams/{name}': p(MANAGERS),
  'POST /upstreams/{name}/refresh': p(MANAGERS),
  'POST /upstreams/{name}/connect': p(EVERYONE, 'a signed-in human: shared upstream, owners and admins; per_user, every member connects their own'),
  'DELETE /upstreams/{name}/connection': p(EVERYONE, 'shared: owners and admins; per_user: a member removes their own, owners and admins anyone\'s'),
  'POST /upstreams/{name}/tools/{tool}/approve': p(DECIDERS),

  // OAuth of MCP clients
  'GET /oauth/requests/{id}': p(EVERYONE),
  'POST /oauth/requests/{id}/decision': p(DECIDERS),
  'GET /oauth/grants': p(EVERYONE),
  'DELETE /oauth/grants/{id}': p(MANAGERS),

  // credentials
  'GET /credentials': p(READERS, 'names only, never values'),
  'GET /credentials/{tool_id}/status': p(READERS),
  'GET /credentials/access-log': p(READERS),
  'POST /credentials/register': p(MANAGERS),
  'DELETE /credentials/{tool_id}/{name}': p(MANAGERS),

  // webhooks
  'GET /webhooks/deliveries': p(READERS),
  'GET /webhooks/deliveries/{delivery_id}': p(READERS),
  'POST /webhooks/test': p(MANAGERS),

  // audit, proofs, evidence
  'GET /audit/log': p(READERS),
  'GET /audit/actions/{action_id}': p(READERS),
  'GET /audit/verify': p(EVERYONE),
  'GET /audit/verifier-key': p(EVERYONE),
  'GET /audit/checkpoints/latest': p(EVERYONE),
  'GET /audit/checkpoints/{tree_size}': p(EVERYONE),
  'GET /audit/receipts/{record_id}': p(AUDITORS, 'evidence: hashes, tool names and the decision of one record'),
  'GET /audit/proof': p(AUDITORS, 'evidence: an inclusion proof and a signed checkpoint'),
  'GET /audit/merkle/roots': p(EVERYONE),
  'GET /audit/merkle/proof/{record_hash}': p(READERS),
  'GET /audit/merkle/consistency/{tree_n}/{tree_m}': p(READERS),
  'GET /audit/subjects': p(AUDITORS, 'personal data'),
  'POST /audit/subjects/lookup': p(AUDITORS, 'personal data'),
  'POST /audit/erase/{subject_id}': p(MANAGERS, 'crypto-shreds a data subject'),
  'GET /audit/erase/{subject_id}/verify': p(AUDITORS),
  'POST /audit/tamper-simulate': p(OWNER, 'alters the chain (a demonstration)'),
  'POST /audit/tamper-restore': p(OWNER),
  'GET /compliance/export/{tenant_id}': p(AUDITORS, 'an export'),
  'GET /anchor/status': p(EVERYONE),
  'GET /anchor/verify': p(EVERYONE),
  'POST /anchor/trigger': p(MANAGERS),
  'POST /backup/trigger': p(MANAGERS),

  // agents' counters
  'GET /agents/{agent_id}/anomaly_score': p(EVERYONE),
  'DELETE /agents/{agent_id}/history': p(MANAGERS),
  'DELETE /agents/{agent_id}/counters': p(MANAGERS),

  // HSM (vault keys)
  'GET /hsm/keys': p(READERS),
  'GET /hsm/keys/{subject_id}/status': p(READERS),
  'POST /hsm/keys': p(MANAGERS),
  'POST /hsm/encrypt': p(MANAGERS),
  'POST /hsm/decrypt': p(MANAGERS, 'reveals plaintext'),

  // managed agents
  'GET /managed/agents': p(EVERYONE),
  'GET /managed/agents/{config_id}': p(EVERYONE),
  'POST /managed/agents': p(MANAGERS),
  'GET /managed/consumers': p(EVERYONE),
  'GET /managed/sessions': p(EVERYONE),
  'POST /managed/sessions': p(MANAGERS),
  'GET /managed/sessions/{session_id}/status': p(EVERYONE),
  'GET /managed/sessions/{session_id}/audit': p(READERS),
  'GET /managed/sessions/{session_id}/compliance': p(AUDITORS),
  'POST /managed/sessions/{session_id}/interrupt': p(['owner', 'admin', 'approver'], 'stops an agent: a supervision decision'),
  'POST /managed/sessions/{session_id}/replay': p(['owner', 'admin', 'policy_author', 'auditor']),
};

interface CompiledRule {
  method: string;
  path: string;
  re: RegExp;
  /** literal segments first: `/members/invitations` wins over `/members/{id}` */
  literal: number;
  permission: Permission;
}

const COMPILED: CompiledRule[] = Object.entries(PERMISSIONS)
  .map(([key, permission]) => {
    const [method, path] = key.split(' ');
    const re = new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{\w+\}/g, '[^/]+')}/?$`);
    return { method, path, re, literal: path.split('/').filter((s) => s && !s.startsWith('{')).length, permission };
  })
  .sort((a, b) => b.literal - a.literal);

/** The rule of a request (method, path relative to /api), or undefined when no operation matches. HEAD is GET's. */
export function permissionOf(method: string, path: string): { key: string; permission: Permission } | undefined {
  const m = method === 'HEAD' ? 'GET' : method;
  const hit = COMPILED.find((r) => r.method === m && r.re.test(path));
  return hit && { key: `${hit.method} ${hit.path}`, permission: hit.permission };
}

/** Whether `role` may call the request. */
export function roleAllows(role: Role, method: string, path: string): boolean {
  const found = permissionOf(method, path);
  if (!found) return role === 'owner';
  return found.permission.roles === 'public' || found.permission.roles.includes(role);
}

/** The settings keys a policy_author may change (PATCH /dashboard/settings). */
export const POLICY_SETTINGS_KEYS: ReadonlySet<string> = new Set(['policy_template', 'policy_config', 'custom_policy', 'override_failing_tests', 'gateway_constraints']);

/** What each role may do, in a sentence (the refusal names it; docs/auth.md, "Roles", says it at length). */
export const ROLE_SUMMARY: Readonly<Record<Role, string>> = {
  owner: 'everything',
  admin: 'settings, agent keys, webhooks, upstreams, credentials, members (not the owner role), managed agents, approvals and every read',
  policy_author: 'the policy (its settings keys only), policy tests (replay), templates, and reads',
  approver: 'approval decisions, upstream tool approvals, OAuth consent decisions, interrupting a managed session, and reads',
  auditor: 'the audit log, subjects, exports, proofs, compliance and replays (read-only), and reads',
  viewer: 'reads of pages without records, personal data or secrets',
};

/** The refusal of a role, naming the rule and what the role may do (the e2e matrix looks for "role"). */
export function roleRefusal(role: Role, method: string, path: string): ForbiddenError {
  const found = permissionOf(method, path);
  const needs = !found ? 'the owner role (no rule names this request)' : `one of the roles ${(found.permission.roles as readonly Role[]).join(', ')}`;
  return new ForbiddenError(`Your role (${role}) may not ${method} /api${path}: it needs ${needs}; a ${role} may: ${ROLE_SUMMARY[role]} (docs/auth.md, "Roles")`);
}

/** Roles of signed-in humans, before any route (after authentication, the rate limit and the key scope). */
export function roleGuard(req: Request, _res: Response, next: NextFunction): void {
  const role = req.auth?.role;
  if (role && req.auth?.method === 'jwt' && !req.auth.viaApiKey && !roleAllows(role, req.method, req.path)) throw roleRefusal(role, req.method, req.path);
  next();
}
