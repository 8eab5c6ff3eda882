/**
 * An MCP tool definition as an upstream lists it (MCP 2025-11-25 `Tool`): the fields the federation reads
 * by name, and every other field (a later revision's too) kept as the upstream wrote it. The vault pins
 * it (services/vault/src/federation/tool-definition.ts); the gateway lists it (federation/federated-catalog.ts).
 */
export interface McpToolDefinition {
  name?: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
  /** 2025-11-25: `{taskSupport: "forbidden" | "optional" | "required"}` */
  execution?: Record<string, unknown>;
  icons?: unknown[];
  _meta?: Record<string, unknown>;
  [field: string]: unknown;
}
