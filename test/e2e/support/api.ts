/**
 * A small client for the public API, used by every e2e test (fetch, no generated code). Every response it
 * sees is appended to the contract log (E2E_CONTRACT_LOG, set by global-setup), which global-teardown
 * checks against the OpenAPI document (support/contract-check.mjs).
 */
import { randomUUID } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { E2E_BASE_URL, E2E_CONTROL_URL } from './e2e-env';
import { eventually, sleep } from './eventually';
import { controlFleet } from './fleet-process';

export interface ApiResponse<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export async function api<T = any>(
  method: string,
  path: string,
  /** `base`: another gateway's API base URL (default: the e2e fleet's) */
  o: { key?: string; token?: string; body?: unknown; rawBody?: string; headers?: Record<string, string>; base?: string } = {},
): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...(o.headers ?? {}) };
  if (o.key) headers['x-api-key'] = o.key;
  if (o.token) headers.authorization = `Bearer ${o.token}`;
  if (o.body !== undefined || o.rawBody !== undefined) headers['content-type'] ??= 'application/json';
  const res = await fetch(`${o.base ?? E2E_BASE_URL}${path}`, { method, headers, body: o.rawBody ?? (o.body === undefined ? undefined : JSON.stringify(o.body)) });
  const text = await res.text();
  let body: any = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    /* not JSON */
  }
  recordForContract(method, path, res, body);
  return { status: res.status, body, headers: res.headers };
}

/**
 * For a test that calls the API with `fetch` itself (to test a wire detail): record its response for the
 * contract test too (status, media type, and the body when it is JSON; the response stays unread).
 */
export async function recordRaw(method: string, url: string, res: Response): Promise<void> {
  const path = url.startsWith('http') ? new URL(url).pathname.replace(/^\/api/, '') + new URL(url).search : url;
  const text = (res.headers.get('content-type') ?? '').includes('json') ? await res.clone().text() : '';
  recordForContract(method, path, res, text ? JSON.parse(text) : undefined);
}

/** One line of the contract log: what the suite saw, to be validated against the OpenAPI document. */
export function recordForContract(method: string, path: string, res: Response, body: unknown): void {
  const log = process.env.E2E_CONTRACT_LOG;
  if (!log) return;
  const line = { method: method.toUpperCase(), path, status: res.status, content_type: res.headers.get('content-type') ?? '', body, test: expect.getState?.().currentTestName ?? null };
  appendFileSync(log, `${JSON.stringify(line)}\n`);
}

export interface Tenant {
  tenantId: string;
  apiKey: string;
  email: string;
  password: string;
  slug: string;
}

/** Sign up a fresh tenant (unique e-mail) and return its API key. */
export async function newTenant(name = 'E2E Tenant'): Promise<Tenant> {
  const email = `e2e-${randomUUID()}@e2e.test`;
  const password = 'correct-horse-battery-staple';
  const r = await api('POST', '/auth/signup', { body: { email, password, tenant_name: name } });
  if (r.status !== 201) throw new Error(`signup failed: ${r.status} ${JSON.stringify(r.body)}`);
  return { tenantId: r.body.tenant_id, apiKey: r.body.api_key, email, password, slug: r.body.slug };
}

/** newTenant, waiting out the per-IP signup limit (30/min) that a full e2e run reaches. */
export async function patientTenant(name = 'E2E Tenant'): Promise<Tenant> {
  for (let i = 0; ; i++) {
    try {
      return await newTenant(name);
    } catch (e) {
      if (i >= 30 || !String(e).includes('429')) throw e;
      await sleep(3000);
    }
  }
}

/** A member of a tenant with `role`: invited (`by` the tenant key or a member's session token), accepted with `password`, signed in. */
export async function invitedMember(by: { key?: string; token?: string }, role: string, email: string, password: string): Promise<{ token: string; id: string; email: string }> {
  const inv = await api('POST', '/members/invitations', { ...by, body: { email, role } });
  expect(inv.status).toBe(201);
  const acc = await api('POST', '/members/invitations/accept', { body: { token: inv.body.token, password } });
  expect(acc.status).toBe(201);
  const login = await api('POST', '/auth/login', { body: { email, password } });
  expect(login.status).toBe(200);
  return { token: login.body.access_token, id: acc.body.user_id, email };
}

/** A signed-in human's session token for the tenant's owner (POST /auth/login): what approvals need by default. */
export async function humanSession(t: Tenant): Promise<string> {
  const r = await api('POST', '/auth/login', { body: { email: t.email, password: t.password } });
  if (r.status !== 200) throw new Error(`login failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.access_token;
}

export function toolCall(over: Record<string, unknown> = {}) {
  return { agent_id: 'agent-1', agent_type: 'assistant', agent_version: '1.0.0', tool: 'svc_web_search', method: 'search', params: { q: 'hello' }, ...over };
}

export function call(key: string, over: Record<string, unknown> = {}) {
  return api('POST', '/mcp/tools/call', { key, body: toolCall(over) });
}

/** Stop/start/kill a service of the e2e fleet for real (scripts/fleet.mjs control endpoint). */
export const fleet = (action: 'stop' | 'start' | 'kill', service: string): Promise<void> => controlFleet(E2E_CONTROL_URL, action, service);

export { eventually, sleep };
