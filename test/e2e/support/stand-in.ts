/** The local platform stand-in's control API, as the managed-session tests drive it (scripted sessions). */
import { E2E_STAND_IN_URL } from './e2e-env';

export async function standIn<T = any>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${E2E_STAND_IN_URL}${path}`, { method, headers: body ? { 'content-type': 'application/json' } : {}, body: body ? JSON.stringify(body) : undefined });
  const text = await res.text();
  if (!res.ok) throw new Error(`stand-in ${method} ${path}: ${res.status} ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

/** Runs steps in a platform session: `{mcp_list}`, `{mcp_call: {tool, arguments}}`, `{tool_use}`, ... */
export const script = (platformSessionId: string, steps: unknown[]) => standIn<{ results: any[] }>('POST', `/_stand-in/sessions/${platformSessionId}/script`, { steps });
