/** A small client for the fleet's public API (fetch), like test/e2e/support/api.ts but at the suite's own base URL. */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { eventually as pollUntil, sleep } from '../../e2e/support/eventually';
import { controlFleet } from '../../e2e/support/fleet-process';
import { BASE_URL, CONTROL_URL } from './env';

export interface ApiResponse<T = any> {
  status: number;
  body: T;
  headers: Headers;
  text: string;
}

export async function api<T = any>(
  method: string,
  path: string,
  o: { key?: string; token?: string; body?: unknown; rawBody?: string; headers?: Record<string, string>; timeoutMs?: number } = {},
): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...(o.headers ?? {}) };
  if (o.key) headers['x-api-key'] = o.key;
  if (o.token) headers.authorization = `Bearer ${o.token}`;
  if (o.body !== undefined || o.rawBody !== undefined) headers['content-type'] ??= 'application/json';
  const res = await fetch(`${BASE_URL}${path}`, {
    method,
    headers,
    body: o.rawBody ?? (o.body === undefined ? undefined : JSON.stringify(o.body)),
    signal: AbortSignal.timeout(o.timeoutMs ?? 30_000),
  });
  const text = await res.text();
  let body: any = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    /* not JSON */
  }
  return { status: res.status, body, headers: res.headers, text };
}

export interface Tenant {
  name: string;
  tenantId: string;
  apiKey: string;
  email: string;
  password: string;
  slug: string;
}

export async function newTenant(name: string, run: string): Promise<Tenant> {
  const email = `faults-${run}-${randomUUID().slice(0, 8)}@faults.test`;
  const password = `pw-${randomUUID()}`;
  const r = await api('POST', '/auth/signup', { body: { email, password, tenant_name: name } });
  if (r.status !== 201) throw new Error(`signup failed: ${r.status} ${r.text}`);
  return { name, tenantId: r.body.tenant_id, apiKey: r.body.api_key, email, password, slug: r.body.slug };
}

export async function settings(t: Tenant, patch: Record<string, unknown>): Promise<any> {
  const r = await api('PATCH', '/dashboard/settings', { key: t.apiKey, body: patch });
  if (r.status !== 200) throw new Error(`settings of ${t.name}: ${r.status} ${r.text}`);
  return r.body;
}

/** Stop/start/kill a service of the suite's fleet for real (scripts/fleet.mjs control endpoint). */
export const fleet = (action: 'stop' | 'start' | 'kill', service: string): Promise<void> => controlFleet(CONTROL_URL, action, service);

/** The process id of each running service of the suite's fleet. */
export async function fleetPids(): Promise<Record<string, number>> {
  const res = await fetch(`${CONTROL_URL}/status`);
  return ((await res.json()) as { pids: Record<string, number> }).pids;
}

/** Resident memory of a process in MB (/proc/<pid>/status VmRSS). */
export function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Math.round(Number(m[1]) / 102.4) / 10 : NaN;
}

export { sleep };

/** `eventually`, polling every 250 ms unless told. */
export const eventually = <T>(fn: () => Promise<T | undefined | null | false>, timeoutMs = 15_000, everyMs = 250): Promise<T> => pollUntil(fn, timeoutMs, everyMs);
