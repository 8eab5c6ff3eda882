/**
 * Scripted sessions: a test (or the demo mode) tells a session what its agent does, step by step; the
 * stand-in emits the events the platform would and makes the MCP calls the platform would.
 *
 * Steps: `{mcp_list: true}`, `{mcp_call: {tool, arguments}}`, `{tool_use: {name, input}}`,
 * `{message: text}`, `{drop_stream: true}`, `{idle: end_turn|retries_exhausted|requires_action}`,
 * `{error: <session error type>}`, `{terminate: true}`, `{wait_ms: n}`. An MCP step may name its server
 * (`server`); the default is the agent's first. An `mcp_call` of a tool whose permission policy is
 * `always_ask` waits, as the platform does, for a `user.tool_confirmation` (idle, `requires_action`). A `user.interrupt` (or the end of the session) stops
 * the script: the remaining steps answer `'skipped'`.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { invalidRequest } from './api-errors';
import { McpFailure, callTool, listToolNames } from './mcp-session-client';
import type { McpServerDef, PlatformState, Session, ToolConfirmation } from './platform-state';

export type Step =
  | { mcp_list: true | string }
  | { mcp_call: { tool: string; arguments?: Record<string, unknown>; server?: string } }
  | { tool_use: { name: string; input?: Record<string, unknown> } }
  | { message: string }
  | { drop_stream: true }
  | { idle: 'end_turn' | 'retries_exhausted' | 'requires_action'; event_ids?: string[] }
  | { error: string }
  | { terminate: true }
  | { wait_ms: number };

/** What one step answered: its own result, `{error}` when it failed, or `'skipped'` after an interrupt. */
export type StepResult = unknown;

const KINDS = ['mcp_list', 'mcp_call', 'tool_use', 'message', 'drop_stream', 'idle', 'error', 'terminate', 'wait_ms'] as const;
const IDLE_REASONS = ['end_turn', 'retries_exhausted', 'requires_action'];

/** Checks a script's shape before anything runs (a 400 names the first bad step). */
export function parseSteps(steps: unknown): Step[] {
  if (!Array.isArray(steps)) throw invalidRequest('steps must be an array');
  steps.forEach((step, i) => {
    const kinds = step && typeof step === 'object' ? KINDS.filter((k) => k in step) : [];
    const s = step as Record<string, any>;
    const ok =
      kinds.length === 1 &&
      (kinds[0] !== 'mcp_call' || typeof s.mcp_call?.tool === 'string') &&
      (kinds[0] !== 'tool_use' || typeof s.tool_use?.name === 'string') &&
      (kinds[0] !== 'idle' || IDLE_REASONS.includes(s.idle)) &&
      (kinds[0] !== 'error' || typeof s.error === 'string') &&
      (kinds[0] !== 'wait_ms' || (typeof s.wait_ms === 'number' && s.wait_ms >= 0));
    if (!ok) throw invalidRequest(`steps[${i}] is not a step: ${JSON.stringify(step)}`);
  });
  return steps as Step[];
}

/** Runs `steps` in order; `signal` (by default the session's current one) stops it between steps. */
export async function runScript(state: PlatformState, s: Session, steps: Step[], signal: AbortSignal = s.stop.signal): Promise<StepResult[]> {
  const results: StepResult[] = [];
  s.scripts++;
  try {
    for (const step of steps) {
      if (signal.aborted || s.status === 'terminated') results.push('skipped');
      else results.push(await runStep(state, s, step, signal).catch((e: Error) => ({ error: e.message })));
    }
  } finally {
    s.scripts--;
  }
  return results;
}

function serverOf(s: Session, name: string | undefined): McpServerDef {
  const server = name === undefined ? s.agent.mcp_servers[0] : s.agent.mcp_servers.find((x) => x.name === name);
  if (!server) throw new Error(name === undefined ? 'the session agent has no MCP server' : `the session agent has no MCP server ${name}`);
  return server;
}

/** A `session.error` for an MCP server the platform could not use (its `retry_status` is terminal). */
function mcpError(s: Session, server: McpServerDef, f: McpFailure) {
  const e = s.log.append('session.error', { error: { type: f.type, message: f.message, mcp_server_name: server.name, retry_status: { type: 'terminal' } } });
  return { error: f.message, error_type: f.type, session_error_id: e.id };
}

async function runStep(state: PlatformState, s: Session, step: Step, signal: AbortSignal): Promise<StepResult> {
  const log = s.log;
  if ('mcp_list' in step || 'mcp_call' in step) {
    const server = serverOf(s, 'mcp_call' in step ? step.mcp_call.server : typeof step.mcp_list === 'string' ? step.mcp_list : undefined);
    const token = state.bearerFor(s, server.url);
    if (!token) return mcpError(s, server, new McpFailure('mcp_authentication_failed_error', `no vault credential of the session is registered for ${server.url}`));
    if ('mcp_list' in step) return listToolNames(server.url, token).catch((e) => (e instanceof McpFailure ? mcpError(s, server, e) : Promise.reject(e)));
    const { tool, arguments: args = {} } = step.mcp_call;
    const policy = state.permissionOf(s, server.name, tool);
    const use = log.append('agent.mcp_tool_use', {
      name: tool,
      input: args,
      mcp_server_name: server.name,
      evaluated_permission: policy === 'always_ask' ? 'ask' : 'allow',
      evaluation: { type: policy },
    });
    if (policy === 'always_ask') {
      // the platform stops before the tool runs: idle with requires_action until a user.tool_confirmation
      const confirmation = await awaitConfirmation(state, s, use.id, signal);
      if (confirmation.result === 'deny') {
        const text = confirmation.deny_message ? `The user denied this tool call: ${confirmation.deny_message}` : 'The user denied this tool call.';
        const denied: CallToolResult = { content: [{ type: 'text', text }], isError: true };
        log.append('agent.mcp_tool_result', { mcp_tool_use_id: use.id, content: denied.content, is_error: true });
        return { ...denied, confirmation: 'deny', tool_use_id: use.id };
      }
    }
    let result: CallToolResult;
    let failure: McpFailure | undefined;
    try {
      result = await callTool(server.url, token, tool, args);
    } catch (e) {
      if (e instanceof McpFailure) failure = e;
      result = { content: [{ type: 'text', text: (e as Error).message }], isError: true };
    }
    log.append('agent.mcp_tool_result', { mcp_tool_use_id: use.id, content: result.content, is_error: Boolean(result.isError) });
    return failure ? { ...result, ...mcpError(s, server, failure) } : result;
  }
  if ('tool_use' in step) {
    const use = log.append('agent.tool_use', { name: step.tool_use.name, input: step.tool_use.input ?? {} });
    const res = log.append('agent.tool_result', { tool_use_id: use.id, content: [{ type: 'text', text: 'ok' }], is_error: false });
    return { tool_use_id: use.id, tool_result_id: res.id };
  }
  if ('message' in step) return { event_id: log.append('agent.message', { content: [{ type: 'text', text: String(step.message) }] }).id };
  if ('drop_stream' in step) return { dropped: log.dropStreams() };
  if ('idle' in step) {
    const stopReason = step.idle === 'requires_action' ? { type: 'requires_action', event_ids: step.event_ids ?? [] } : { type: step.idle };
    return { event_id: state.setStatus(s, 'idle', stopReason)?.id ?? null };
  }
  if ('error' in step) {
    return { event_id: log.append('session.error', { error: { type: step.error, message: `stand-in scripted ${step.error}`, retry_status: { type: 'terminal' } } }).id };
  }
  if ('terminate' in step) return { event_id: state.setStatus(s, 'terminated')?.id ?? null };
  const ms = Math.min(step.wait_ms, 60_000);
  const interrupted = await new Promise<boolean>((resolve) => {
    const t = setTimeout(() => done(false), ms);
    const done = (v: boolean) => {
      clearTimeout(t);
      signal.removeEventListener('abort', onAbort);
      resolve(v);
    };
    const onAbort = () => done(true);
    signal.addEventListener('abort', onAbort);
  });
  return { waited: ms, interrupted };
}

/**
 * Blocks a tool use on a confirmation: the session goes idle (`requires_action` naming the tool use) until
 * a `user.tool_confirmation` for it arrives (PlatformState.confirm), then runs again. An interrupt or the
 * end of the session denies it.
 */
function awaitConfirmation(state: PlatformState, s: Session, toolUseId: string, signal: AbortSignal): Promise<ToolConfirmation> {
  return new Promise<ToolConfirmation>((resolve) => {
    const onAbort = () => {
      s.awaiting.delete(toolUseId);
      resolve({ result: 'deny', deny_message: 'the turn was interrupted' });
    };
    if (signal.aborted) return onAbort();
    s.awaiting.set(toolUseId, (c) => {
      signal.removeEventListener('abort', onAbort);
      if (s.status === 'idle' && s.awaiting.size === 0) state.setStatus(s, 'running');
      resolve(c);
    });
    signal.addEventListener('abort', onAbort, { once: true });
    state.setStatus(s, 'idle', { type: 'requires_action', event_ids: [...s.awaiting.keys()] });
  });
}

/** A tool that sends e-mail, by its name: the demo's agent wants to send one (the tour asks a human first). */
const EMAIL_TOOL = /e-?mail|send/i;

/**
 * What a demo session does by itself (`npm start` without ANTHROPIC_API_KEY): its governed tools, a call
 * of the first one, an e-mail to a customer when an e-mail tool is listed (with `require_human_approval`
 * it waits for a human in the Approvals inbox), `ls -la`, end of turn.
 */
export async function runDemo(state: PlatformState, s: Session): Promise<StepResult[]> {
  const signal = s.stop.signal;
  const [tools] = await runScript(state, s, [{ mcp_list: true }], signal);
  const names = Array.isArray(tools) ? (tools as string[]) : [];
  const first = names.find((n) => !EMAIL_TOOL.test(n)) ?? names[0];
  const email = names.find((n) => EMAIL_TOOL.test(n) && n !== first);
  const rest = await runScript(state, s, [
    ...(first ? [{ mcp_call: { tool: first, arguments: { method: 'call', params: {} } } }] : []),
    ...(email ? [{ mcp_call: { tool: email, arguments: { method: 'send', params: { to: 'customer@example.com', subject: 'Your order', body: 'Your order shipped today.' } } } }] : []),
    { tool_use: { name: 'bash', input: { command: 'ls -la' } } },
    { message: first ? `Called ${[first, email].filter(Boolean).join(' and ')} through the governance gateway, then listed the workspace.` : 'No governed tool was available; listed the workspace.' },
    { idle: 'end_turn' },
  ], signal);
  return [tools, ...rest];
}
