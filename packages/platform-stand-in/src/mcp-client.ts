/**
 * The stand-in acting as the platform's MCP client: it connects to the session agent's remote MCP server
 * with the bearer token of the vault credential registered for that exact URL (Streamable HTTP, the
 * official MCP SDK client), as the platform does for an `mcp_toolset`.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

export async function withMcp<T>(url: string, token: string, fn: (c: Client) => Promise<T>): Promise<T> {
  const client = new Client({ name: 'agw-platform-stand-in', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
  await client.connect(transport);
  try {
    return await fn(client);
  } finally {
    await client.close().catch(() => undefined);
  }
}
