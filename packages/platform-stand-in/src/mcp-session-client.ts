/**
 * The stand-in as the platform's MCP client: it connects to a session agent's remote MCP server
 * (Streamable HTTP, the official MCP SDK `Client`) with `Authorization: Bearer <token>` from the vault
 * credential registered for that exact URL, as the platform does for an `mcp_toolset`. Transport-level
 * failures are classified as the platform's session error types.
 */
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

export type McpFailureType = 'mcp_authentication_failed_error' | 'mcp_connection_failed_error';

/** The MCP server could not be reached or refused the bearer: a `session.error` on the platform. */
export class McpFailure extends Error {
  constructor(
    readonly type: McpFailureType,
    message: string,
  ) {
    super(message);
  }
}

function classify(e: unknown, url: string): McpFailure {
  if (e instanceof McpFailure) return e;
  const code = (e as { code?: unknown })?.code;
  if (e instanceof UnauthorizedError || code === 401 || code === 403) {
    return new McpFailure('mcp_authentication_failed_error', `the MCP server ${url} refused the credential (${(e as Error).message})`);
  }
  return new McpFailure('mcp_connection_failed_error', `could not reach the MCP server ${url}: ${(e as Error).message}`);
}

/** Whether an error from a request is the transport's (HTTP status, network) rather than a JSON-RPC error. */
const isTransportError = (e: unknown) => {
  const code = (e as { code?: unknown })?.code;
  return e instanceof UnauthorizedError || (typeof code === 'number' && code >= 400 && code < 600) || e instanceof TypeError;
};

/** Connects with the bearer, runs `fn`, and disconnects. Transport failures reject as {@link McpFailure}. */
export async function withMcpSession<T>(url: string, token: string, fn: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ name: 'agw-platform-stand-in', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
  try {
    await client.connect(transport);
  } catch (e) {
    await client.close().catch(() => undefined);
    throw classify(e, url);
  }
  try {
    return await fn(client);
  } catch (e) {
    throw isTransportError(e) ? classify(e, url) : e;
  } finally {
    await client.close().catch(() => undefined);
  }
}

export const listToolNames = (url: string, token: string): Promise<string[]> =>
  withMcpSession(url, token, async (c) => (await c.listTools()).tools.map((t) => t.name));

export const callTool = (url: string, token: string, name: string, args: Record<string, unknown>): Promise<CallToolResult> =>
  withMcpSession(url, token, async (c) => (await c.callTool({ name, arguments: args })) as CallToolResult);
