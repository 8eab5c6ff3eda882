/**
 * tools/list of the gateway's MCP servers: each tool as a client sees it (federated tools with the upstream's
 * own definition, credential tools with the generic governed input).
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { type McpTools, type SessionScope, governedToolInputJsonSchema } from './governed-tools';

/** tools/list: federated tools with the upstream's definition, then credential tools with the generic input. */
export function listedTools(tools: McpTools, session?: SessionScope): Tool[] {
  const federated: Tool[] = [...tools.federated.values()].map((t) => ({
    name: t.name,
    ...(t.definition.title ? { title: t.definition.title } : {}),
    description: t.definition.description ?? '',
    inputSchema: t.definition.inputSchema as Tool['inputSchema'],
    ...(t.definition.outputSchema ? { outputSchema: t.definition.outputSchema as Tool['outputSchema'] } : {}),
    ...(t.definition.annotations ? { annotations: t.definition.annotations } : {}),
  }));
  const credential: Tool[] = tools.credential.map((tool) => ({
    name: tool,
    description: `Governed tool ${tool}: policy-checked and audited by the gateway${session ? ` (managed session ${session.sessionId})` : ', executed with its HSM-held credential'}.`,
    inputSchema: governedToolInputJsonSchema as Tool['inputSchema'],
  }));
  return [...federated, ...credential];
}
