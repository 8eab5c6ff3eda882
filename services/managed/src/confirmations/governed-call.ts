/**
 * A platform tool use of the session's MCP server, as the gateway's MCP server will govern it: the same
 * (tool, method, params) the gateway derives from the same name and arguments (services/gateway/src/mcp/
 * governed-tools.ts), so the approved call's params hash matches the call that arrives after `allow`.
 * - a federated tool `<upstream>__<tool>` (no upstream name holds `__`): tool = upstream, method = tool,
 *   params = the arguments;
 * - a credential tool: its generic input `{method = 'call', params = {}}`.
 */
export interface GovernedCall {
  tool: string;
  method: string;
  params: Record<string, unknown>;
  /** the MCP name of a federated tool (approval patterns also match it) */
  federatedName?: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export function governedCallOf(name: string, input: Record<string, unknown>): GovernedCall {
  const sep = name.indexOf('__');
  if (sep > 0) return { tool: name.slice(0, sep), method: name.slice(sep + 2), params: input, federatedName: name };
  return { tool: name, method: typeof input.method === 'string' && input.method ? input.method : 'call', params: isObject(input.params) ? input.params : {} };
}
