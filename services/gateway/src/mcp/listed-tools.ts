/**
 * tools/list of the gateway's MCP servers: each tool as a client sees it (federated tools with the upstream's
 * own definition, whole and in its key order, credential tools with the generic governed input).
 */
import type { Tool } from '@modelcontextprotocol/server';
import type { FederatedTool } from '../federation/federated-catalog';
import { type McpTools, type SessionScope, governedToolInputJsonSchema } from './governed-tools';

/**
 * A federated tool as tools/list gives it: the upstream's definition byte for byte (every field, in the
 * upstream's key order at every level), its `name` replaced by the federated name in the place it had.
 */
export function federatedToolListing(t: FederatedTool): Tool {
  const def = t.definition;
  if (!Object.hasOwn(def, 'name')) return { name: t.name, ...def } as Tool;
  return Object.fromEntries(Object.entries(def).map(([k, v]) => [k, k === 'name' ? t.name : v])) as Tool;
}

/** tools/list: federated tools with the upstream's definition, then credential tools with the generic input. */
export function listedTools(tools: McpTools, session?: SessionScope): Tool[] {
  const federated: Tool[] = [...tools.federated.values()].map(federatedToolListing);
  const credential: Tool[] = tools.credential.map((tool) => ({
    name: tool,
    description: `Governed tool ${tool}: policy-checked and audited by the gateway${session ? ` (managed session ${session.sessionId})` : ', executed with its HSM-held credential'}.`,
    inputSchema: governedToolInputJsonSchema as Tool['inputSchema'],
  }));
  return [...federated, ...credential];
}
