/**
 * The remote MCP server's tools, and every MCP `tools/call` runs the same governance pipeline as
 * `POST /api/mcp/tools/call` (never a second implementation). Two kinds:
 * - federated tools (docs/federation.md): `<upstream>__<tool>` with the upstream's own definition; a call
 *   is `tool = <upstream>`, `method = <tool>`, `params = the arguments`, and an allowed one answers with the
 *   upstream's CallToolResult as it sent it;
 * - credential tools (generic `{method, params, agent_id, …}` input): for a managed session's MCP server
 *   (`/api/mcp/server/sessions/<id>`), the config's `allowed_tools` that name no federated tool; for the
 *   tenant-wide server (`/api/mcp/server`), the tools the tenant registered a credential for.
 */
import { InputError, matchesAnyGlob, mayRequireApproval } from '@agw/shared';
import { UPSTREAM_NAME } from '../federation/upstream-names';
import type { FederatedTool } from '../federation/federated-catalog';
import { z } from 'zod';
import type { McpDeps } from './mcp-deps';
import type { UpstreamRound } from '../pipeline/hooks';
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
  content: Array<{ type: string; [key: string]: unknown }>;
  isError?: boolean;
}

/** The JSON Schema of the credential tools' input, as tools/list shows it. */
export const governedToolInputJsonSchema = z.toJSONSchema(z.object(governedToolInput), { io: 'input' }) as Record<string, unknown>;
const governedToolArgs = z.object(governedToolInput);

/** A credential tool's arguments, defaults applied; a bad one is a field error at `arguments.*`. */
export function parseGovernedToolArgs(args: unknown): GovernedToolArgs {
  const parsed = governedToolArgs.safeParse(args ?? {});
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    throw new InputError([{ loc: ['arguments', ...first.path.map(String)], msg: first.message, type: first.code }]);
  }
  return parsed.data as GovernedToolArgs;
}

/** The tenant's governed tools (distinct tool ids with a registered credential). */
export async function governedTools(d: Pick<McpDeps, 'vault'>, tenantId: string): Promise<string[]> {
  const { credentials } = await d.vault.listCredentials({ tenant_id: tenantId });
  return [...new Set(credentials.map((c) => c.tool_id))].sort();
}

/** The tools one MCP server offers: federated ones by MCP name, and credential tools. */
export interface McpTools {
  federated: Map<string, FederatedTool>;
  credential: string[];
  /** a session's server: its config's allowed_tools (a federated name outside them is never this server's) */
  allowed?: string[];
  /** one upstream's own server (/api/mcp/server/upstreams/<name>): its tools under their own names */
  upstream?: string;
}

/**
 * The tools of one upstream's own server: only that upstream's, under the upstream's own names (no
 * `<upstream>__` prefix), every call still governed as `tool = <upstream>`.
 */
export function upstreamTools(all: McpTools, upstream: string): McpTools {
  const prefix = `${upstream}__`;
  const federated = [...all.federated.values()].filter((t) => t.upstream === upstream && t.name.startsWith(prefix)).map((t) => ({ ...t, name: t.name.slice(prefix.length) }));
  return { federated: new Map(federated.map((t) => [t.name, t])), credential: [], upstream };
}

/** The tools of the tenant-wide server, or of a session's server (its config's allowed_tools). */
export async function mcpToolsOf(d: Pick<McpDeps, 'federation' | 'vault'>, tenantId: string, allowed?: string[]): Promise<McpTools> {
  const federated = await d.federation.tools(tenantId);
  const selected = allowed ? federated.filter((t) => matchesAnyGlob(allowed, t.name)) : federated;
  const federatedByName = new Map(selected.map((t) => [t.name, t]));
  // a session's literal names that name no federated tool are credential tools ("__" is federation's)
  const credential = allowed ? allowed.filter((n) => !/[*?]/.test(n) && !n.includes('__')) : await governedTools(d, tenantId);
  return { federated: federatedByName, credential: credential.filter((n) => !federatedByName.has(n)), ...(allowed ? { allowed } : {}) };
}


/**
 * A federated name that tools/list does not show (a quarantined tool, or one that became active since the
 * list was cached): the upstream's tool it names, asked of the catalog. Undefined when it names none, or
 * a tool the upstream does not offer. A name splits at its first `__` (an upstream name ends with a letter
 * or digit, a tool name never starts with `_`); the second split is tried for an upstream registered
 * before that rule, whose name may end with "_".
 */
export async function unlistedFederatedTool(d: McpDeps, tenantId: string, tools: McpTools, name: string): Promise<FederatedTool | undefined> {
  if (tools.allowed && !matchesAnyGlob(tools.allowed, name)) return undefined;
  const splits: Array<{ upstream: string; tool: string }> = [];
  for (let i = name.indexOf('__'); i > 0 && splits.length < 2; i = name.indexOf('__', i + 1)) {
    const upstream = name.slice(0, i);
    const tool = name.slice(i + 2);
    if (UPSTREAM_NAME.test(upstream) && !upstream.includes('__') && tool) splits.push({ upstream, tool });
  }
  for (const s of splits) {
    const t = await d.federation.target(tenantId, s.upstream, s.tool);
    if (t.upstream && (t.executable || (t.violation && t.violation !== 'upstream_tool_unknown'))) return { name, ...s, definition: { inputSchema: { type: 'object' } } };
  }
  return undefined;
}

/**
 * The tools of a session's server that a `require_human_approval` pattern may match: the platform asks
 * before each call of them (permission policy always_ask; docs/managed.md, "Tools that ask a human").
 */
export function askToolsOf(tools: McpTools, patterns: readonly string[]): string[] {
  if (!patterns.length) return [];
  const federated = [...tools.federated.values()].filter((t) => mayRequireApproval(patterns, { name: t.name, upstream: t.upstream, method: t.tool })).map((t) => t.name);
  return [...federated, ...tools.credential.filter((name) => mayRequireApproval(patterns, { name }))].sort();
}

/** A managed session's governance, as its MCP server applies it. */
export interface SessionScope {
  sessionId: string;
  /** the managed agent config: the agent_id of every record of the session */
  agentId: string;
  approvalPatterns: string[];
}

/** One MCP tools/call through the governance pipeline (a session's calls carry its id and approval patterns): its outcome. */
export async function callGovernedTool(
  d: McpDeps,
  tenantId: string,
  tool: string,
  args: GovernedToolArgs,
  session?: SessionScope,
  /** the API key making the call (its queued actions are its own: GET /actions/{id} for an agent key); `timings` gets each step's ms */
  caller?: { apiKeyHash?: string; agentKey?: boolean; actsFor?: string; timings?: Record<string, number>; upstreamRound?: UpstreamRound },
): Promise<ToolCallOutcome> {
  const parsed = toolCallSchema.safeParse({ ...args, tool, ...(session ? { agent_id: session.agentId, agent_type: 'managed' } : {}) });
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    throw new InputError([{ loc: ['arguments', ...first.path.map(String)], msg: first.message, type: first.code }]);
  }
  const settings = await d.settings.stored(tenantId);
  const { timings, ...key } = caller ?? {};
  return d.pipeline.run({ tenantId, settings, sessionId: session?.sessionId, approvalPatterns: session?.approvalPatterns, timings, ...key }, parsed.data);
}

/** A federated tool's call: the arguments are the upstream tool's, the agent is the MCP client (or the session's). */
export async function callFederatedTool(
  d: McpDeps,
  tenantId: string,
  tool: { upstream: string; tool: string },
  args: Record<string, unknown>,
  session?: SessionScope,
  caller?: { apiKeyHash?: string; agentKey?: boolean; agentId?: string; actsFor?: string; timings?: Record<string, number>; signal?: AbortSignal },
  /** the retry of this exact call after a human approved it for the agent to run (approved-retry.ts) */
  approvedActionId?: string,
  /** a relayed round of the upstream's own input_required (mcp-calls.ts) */
  relay?: Omit<UpstreamRound, 'signal'>,
): Promise<ToolCallOutcome> {
  const call = { method: tool.tool, params: args, agent_id: caller?.agentId ?? 'mcp-client', agent_type: 'mcp', agent_version: '1.0.0', ...(approvedActionId ? { approved_action_id: approvedActionId } : {}) };
  const { agentId: _agent, signal, ...rest } = caller ?? {};
  // the client's request closing cancels the upstream call; a relayed round goes to the upstream with it
  const upstreamRound = signal || relay ? { ...relay, ...(signal ? { signal } : {}) } : undefined;
  return callGovernedTool(d, tenantId, tool.upstream, call, session, { ...rest, ...(upstreamRound ? { upstreamRound } : {}) });
}

const text = (v: unknown) => [{ type: 'text' as const, text: typeof v === 'string' ? v : JSON.stringify(v) }];

/**
 * Why a brokered execution failed, from its result: the status, and the `error` text of its body where it
 * has one (the vault's reason for a blocked target or a timeout, or the upstream's own error), shortened.
 */
function failureOf(r: { status_code: number; body: unknown }): string {
  const error = (r.body as { error?: unknown } | null)?.error;
  const why = typeof error === 'string' && error ? error : typeof r.body === 'string' && r.body ? r.body : '';
  return `status ${r.status_code}${why ? ` (${why.length > 300 ? `${why.slice(0, 300)}…` : why})` : ''}`;
}

/**
 * Decisions as MCP results, so that a model never takes a failure for success: allowed -> the execution
 * result (a federated call: the upstream's own CallToolResult, with the action id in `_meta`), an error
 * result with its cause when the execution failed (a status other than 2xx: the upstream's error, a
 * blocked target, a timeout); denied -> an error result with the violations and, where there is one, the
 * reason (a quarantined federated tool: how a human approves it). A queued call is answered by what the
 * client can wait with (mcp-calls.ts, approval-rounds.ts).
 */
export function toMcpResult(o: Exclude<ToolCallOutcome, { kind: 'pending' }>): McpToolResult {
  if (o.kind === 'allowed' && o.mcp_result && o.execution_result) {
    const meta = { 'io.agw/action_id': o.action_id };
    const body = o.execution_result.body as McpToolResult | { error?: string } | null;
    if (o.execution_result.status_code === 200 && body && Array.isArray((body as McpToolResult).content)) {
      const r = body as McpToolResult;
      return { ...r, _meta: { ...((r._meta as object) ?? {}), ...meta } };
    }
    const error = (body as { error?: string } | null)?.error ?? `upstream status ${o.execution_result.status_code}`;
    return { isError: true, content: text(`The gateway allowed the call (action ${o.action_id}) but the upstream failed: ${error}`), _meta: meta };
  }
  if (o.kind === 'allowed') {
    const r = o.execution_result;
    const failed = r !== undefined && (r.status_code < 200 || r.status_code > 299);
    return {
      ...(failed ? { isError: true } : {}),
      content: text({
        status: 'allowed',
        action_id: o.action_id,
        execution_mode: o.execution_mode,
        ...(failed ? { error: `The gateway allowed the call but its execution failed with ${failureOf(r)}` } : {}),
        ...(r ? { execution_result: r } : {}),
      }),
    };
  }
  return { isError: true, content: text({ status: 'denied', action_id: o.action_id, violations: o.violations, severity: o.severity, alert_tier: o.alert_tier, ...(o.message ? { message: o.message } : {}) }) };
}
