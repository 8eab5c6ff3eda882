/**
 * The remote MCP server's tools: one MCP tool per governed tool of the tenant, and every MCP `tools/call`
 * runs the same governance pipeline as `POST /api/mcp/tools/call` (never a second implementation).
 *
 * Governed tools: for a managed session's MCP server (`/api/mcp/server/sessions/<id>`), the config's
 * `allowed_tools`; for the tenant-wide server (`/api/mcp/server`), the tools the tenant has registered a
 * credential for, i.e. the tools the gateway itself can execute (agent-blind) and answer with a result.
 */
import { InputError } from '@agw/shared';
import { z } from 'zod';
import type { GatewayDeps } from '../deps';
import type { ToolCallOutcome } from '../pipeline/tool-call.pipeline';
import { toolCallSchema } from '../pipeline/tool-call.schema';

/** Arguments of every governed MCP tool: the governed call's method and params, and who the agent is. */
export const governedToolInput = {
  method: z.string().min(1).max(256).default('call').describe('the tool method, as in POST /api/mcp/tools/call'),
  params: z.record(z.string(), z.unknown()).default({}).describe('the method parameters (at most 64 KB of JSON)'),
  agent_id: z.string().min(1).max(256).default('mcp-client').describe('the calling agent (letters, digits, ".", "_", "-")'),
  agent_type: z.string().min(1).max(128).default('mcp').describe('the kind of agent'),
  agent_version: z.string().max(128).default('1.0.0').describe('semantic version of the agent'),
  approved_action_id: z
    .string()
    .optional()
    .describe('when a human approved this exact call (same method and params) queued under this action id: run it now, once (docs/auth.md)'),
};

export type GovernedToolArgs = { method: string; params: Record<string, unknown>; agent_id: string; agent_type: string; agent_version: string; approved_action_id?: string };

export interface McpToolResult {
  [key: string]: unknown;
  content: Array<{ type: 'text'; text: string }>;
  isError?: boolean;
}

/** The tenant's governed tools (distinct tool ids with a registered credential). */
export async function governedTools(d: GatewayDeps, tenantId: string): Promise<string[]> {
  const { credentials } = await d.vault.listCredentials({ tenantId });
  return [...new Set(credentials.map((c) => c.toolId))].sort();
}

/** A managed session's governance, as its MCP server applies it. */
export interface SessionScope {
  sessionId: string;
  /** the managed agent config: the agent_id of every record of the session */
  agentId: string;
  approvalPatterns: string[];
}

/** One MCP tools/call through the governance pipeline (a session's calls carry its id and approval patterns). */
export async function callGovernedTool(
  d: GatewayDeps,
  tenantId: string,
  tool: string,
  args: GovernedToolArgs,
  session?: SessionScope,
  /** the API key making the call (its queued actions are its own: GET /actions/{id} for an agent key) */
  caller?: { apiKeyHash?: string; agentKey?: boolean },
): Promise<McpToolResult> {
  const parsed = toolCallSchema.safeParse({ ...args, tool, ...(session ? { agent_id: session.agentId, agent_type: 'managed' } : {}) });
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    throw new InputError([{ loc: ['arguments', ...first.path.map(String)], msg: first.message, type: first.code }]);
  }
  const settings = await d.settings.stored(tenantId);
  return toMcpResult(await d.pipeline.run({ tenantId, settings, sessionId: session?.sessionId, approvalPatterns: session?.approvalPatterns, ...caller }, parsed.data));
}

/** Decisions as MCP results: allowed -> the execution result; pending -> a text that it is queued; denied -> an error result. */
export function toMcpResult(o: ToolCallOutcome): McpToolResult {
  const text = (v: unknown) => [{ type: 'text' as const, text: typeof v === 'string' ? v : JSON.stringify(v) }];
  if (o.kind === 'allowed') {
    return { content: text({ status: 'allowed', action_id: o.action_id, execution_mode: o.execution_mode, ...(o.execution_result ? { execution_result: o.execution_result } : {}) }) };
  }
  if (o.kind === 'pending') return { content: text(o.message) };
  return { isError: true, content: text({ status: 'denied', action_id: o.action_id, violations: o.violations, severity: o.severity, alert_tier: o.alert_tier }) };
}
