/**
 * The gateway's MCP endpoint at revision 2026-07-28 over raw HTTP, as a client without an SDK calls it: one
 * JSON-RPC request with the revision's headers (`mcp-protocol-version`, `mcp-method`, `mcp-name`) and the
 * client's `_meta` (revision, client info, capabilities), recorded for the route matrix; the answer's status
 * and JSON body.
 */
import { recordRaw } from './api';
import { E2E_BASE_URL } from './e2e-env';

export const MCP_URL = `${E2E_BASE_URL}/mcp/server`;
export const MCP_2026 = '2026-07-28';

/** The `_meta` a 2026-07-28 client sends with each request. */
export const meta2026 = (clientName: string, caps: Record<string, unknown> = {}) => ({
  'io.modelcontextprotocol/protocolVersion': MCP_2026,
  'io.modelcontextprotocol/clientInfo': { name: clientName, version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': caps,
});

/** One request; `mcp-name` is `name`, else the params' tool name or task id. */
export async function mcp2026(
  method: string,
  params: Record<string, unknown>,
  o: { key: string; clientName: string; caps?: Record<string, unknown>; name?: string; signal?: AbortSignal },
) {
  const name = o.name ?? (params.name as string | undefined) ?? (params.taskId as string | undefined);
  const res = await fetch(MCP_URL, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${o.key}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MCP_2026,
      'mcp-method': method,
      ...(name ? { 'mcp-name': name } : {}),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: Math.floor(Math.random() * 1e9), method, params: { ...params, _meta: meta2026(o.clientName, o.caps) } }),
    ...(o.signal ? { signal: o.signal } : {}),
  });
  await recordRaw('POST', MCP_URL, res);
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const body: any = await res.json();
  return { status: res.status, body };
}
