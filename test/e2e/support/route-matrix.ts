/**
 * What the route matrices (isolation, scopes) share: the operations of the served OpenAPI document, one
 * object of a tenant for every path parameter, and a path filled with them. A new path parameter is added
 * here once, and every matrix covers it.
 */
import { type Tenant, api, toolCall } from './api';

export interface Operation {
  method: string;
  path: string;
  /** `security: []` in the document */
  public: boolean;
}

/** Every operation of the OpenAPI document (GET /api/openapi.json). */
export async function documentOperations(): Promise<Operation[]> {
  const doc = (await api('GET', '/openapi.json')).body;
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries<Record<string, { security?: unknown[] }>>(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (['get', 'post', 'put', 'patch', 'delete'].includes(method)) ops.push({ method: method.toUpperCase(), path, public: Array.isArray(op.security) && op.security.length === 0 });
    }
  }
  return ops;
}

export interface TenantObjects {
  /** path parameter name -> an object of the tenant */
  params: Record<string, string>;
  pendingActionId: string;
  /** the status the queued call was answered with (202) */
  pendingStatus: number;
  subjectId: string;
  configId: string;
  sessionId: string;
  /** the values the objects were made with (`<prefix>_orders`, `<prefix>-secret-value-123`, `<prefix>.person@example.com`, ...) */
  names: { orders: string; credential: string; credentialValue: string; email: string };
}

/**
 * Objects of tenant `t`: a queued action (queued with `queueKey`, the tenant key by default), a data
 * subject, a credential, a managed agent config and session, and the latest record.
 */
export async function tenantObjects(t: Tenant, prefix: string, queueKey = t.apiKey): Promise<TenantObjects> {
  const names = { orders: `${prefix}_orders`, credential: `${prefix}-cred`, credentialValue: `${prefix}-secret-value-123`, email: `${prefix}.person@example.com` };
  const pending = await api('POST', '/mcp/tools/call', { key: queueKey, body: toolCall({ tool: 'svc_db', method: 'delete', params: { table: names.orders } }) });
  await api('POST', '/mcp/tools/call', { key: t.apiKey, body: toolCall({ tool: 'svc_send_email', method: 'send', params: { to: names.email, body: 'Automated' } }) });
  const subject = await api('POST', '/audit/subjects/lookup', { key: t.apiKey, body: { identifier: names.email } });
  await api('POST', '/credentials/register', { key: t.apiKey, body: { tool_id: `svc_${prefix}_tool`, name: names.credential, value: names.credentialValue } });
  // an upstream MCP server under the credential's name (the matrix fills {name} once): unreachable, so it
  // is registered with status error at once, and still the tenant's object
  await api('POST', '/upstreams', { key: t.apiKey, body: { name: names.credential, url: 'http://127.0.0.1:9/mcp' } });
  const config = await api('POST', '/managed/agents', { key: t.apiKey, body: { name: `${prefix}-agent`, allowed_tools: ['svc_web_search'] } });
  const session = await api('POST', '/managed/sessions', { key: t.apiKey, body: { agent_id: config.body.id } });
  const log = await api('GET', '/audit/log?limit=1', { key: t.apiKey });
  const params: Record<string, string> = {
    action_id: pending.body.action_id,
    record_hash: log.body.records[0].record_hash,
    record_id: String(log.body.records[0].id),
    tool_id: `svc_${prefix}_tool`,
    name: names.credential,
    subject_id: subject.body.subject_id,
    config_id: config.body.id,
    session_id: session.body.session_id,
    tenant_id: t.tenantId,
    id: t.tenantId,
    slug: t.slug,
    delivery_id: '00000000-0000-4000-8000-000000000000',
    tree_n: '0',
    tree_m: '0',
    tree_size: '1',
    agent_id: 'agent-1',
    tool: 'weather',
  };
  return { params, pendingActionId: pending.body.action_id, pendingStatus: pending.status, subjectId: subject.body.subject_id, configId: config.body.id, sessionId: session.body.session_id, names };
}

/** `path` with its parameters filled from `params`, or the parameters it has no object for. */
export function fillPath(path: string, params: Record<string, string>): { url: string; missing: string[] } {
  const missing = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).filter((p) => !(p in params));
  return { url: path.replace(/\{(\w+)\}/g, (_m, p: string) => encodeURIComponent(params[p] ?? '')), missing };
}
