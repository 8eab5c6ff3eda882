/**
 * Scripted sessions: a test (or the demo) tells a session what its agent does, step by step, and the
 * stand-in emits the events the platform would and makes the MCP calls the platform would.
 *
 * Steps: `{mcp_list}`, `{mcp_call: {tool, arguments}}`, `{tool_use: {name, input}}`, `{message}`,
 * `{drop_stream}`, `{idle: end_turn|retries_exhausted|requires_action}`, `{error: <type>}`,
 * `{terminate}`, `{wait_ms}`. An interrupt stops the script: the remaining steps answer `skipped`.
 */
import { withMcp } from './mcp-client';
import type { PlatformState, Session } from './platform-state';

export type Step = Record<string, any>;

export async function runScript(state: PlatformState, s: Session, steps: Step[]): Promise<unknown[]> {
  const epoch = s.interruptEpoch;
  const results: unknown[] = [];
  for (const step of steps) {
    if (s.interruptEpoch !== epoch || s.status === 'terminated') {
      results.push('skipped');
      continue;
    }
    results.push(await runStep(state, s, step).catch((e: Error) => ({ error: e.message })));
  }
  return results;
}

async function runStep(state: PlatformState, s: Session, step: Step): Promise<unknown> {
  const log = s.log;
  if (step.mcp_list || step.mcp_call) {
    const server = s.agent.mcp_servers[0];
    if (!server) throw new Error('the session agent has no MCP server');
    const token = state.tokenFor(s, server.url);
    if (!token) {
      log.append('session.error', { error: { type: 'mcp_authentication_failed_error', message: `no vault credential for ${server.url}`, mcp_server_name: server.name } });
      throw new Error(`no vault credential for ${server.url}`);
    }
    if (step.mcp_list) return withMcp(server.url, token, async (c) => (await c.listTools()).tools.map((t) => t.name));
    const { tool, arguments: args = {} } = step.mcp_call;
    const use = log.append('agent.mcp_tool_use', { name: tool, input: args, mcp_server_name: server.name });
    try {
      const result = await withMcp(server.url, token, (c) => c.callTool({ name: tool, arguments: args }));
      log.append('agent.mcp_tool_result', { mcp_tool_use_id: use.id, content: result.content, is_error: Boolean(result.isError) });
      return result;
    } catch (e) {
      log.append('agent.mcp_tool_result', { mcp_tool_use_id: use.id, content: [{ type: 'text', text: (e as Error).message }], is_error: true });
      return { isError: true, error: (e as Error).message };
    }
  }
  if (step.tool_use) {
    const use = log.append('agent.tool_use', { name: step.tool_use.name, input: step.tool_use.input ?? {} });
    log.append('agent.tool_result', { tool_use_id: use.id, content: [{ type: 'text', text: 'ok' }], is_error: false });
    return { tool_use_id: use.id };
  }
  if (step.message !== undefined) return log.append('agent.message', { content: [{ type: 'text', text: String(step.message) }] }).id;
  if (step.drop_stream) {
    log.dropStreams();
    return { dropped: true };
  }
  if (step.idle) {
    s.status = 'idle';
    const stop_reason = step.idle === 'requires_action' ? { type: 'requires_action', event_ids: [] } : { type: step.idle };
    return log.append('session.status_idle', { stop_reason, stop_details: null }).id;
  }
  if (step.error) return log.append('session.error', { error: { type: String(step.error), message: `stand-in: ${step.error}` } }).id;
  if (step.terminate) {
    s.status = 'terminated';
    return log.append('session.status_terminated').id;
  }
  if (step.wait_ms !== undefined) {
    await new Promise((r) => setTimeout(r, Math.min(Number(step.wait_ms) || 0, 60_000)));
    return { waited: step.wait_ms };
  }
  throw new Error(`unknown step ${JSON.stringify(step)}`);
}

/** What a demo session does by itself (npm start without ANTHROPIC_API_KEY). */
export async function runDemo(state: PlatformState, s: Session): Promise<void> {
  const [tools] = (await runScript(state, s, [{ mcp_list: true }])) as [string[] | { error: string }];
  const first = Array.isArray(tools) ? tools[0] : undefined;
  await runScript(state, s, [
    ...(first ? [{ mcp_call: { tool: first, arguments: { method: 'call', params: {} } } }] : []),
    { tool_use: { name: 'bash', input: { command: 'ls -la' } } },
    { message: first ? `Called ${first} through the governance gateway and listed the workspace.` : 'No governed tools were available; listed the workspace.' },
    { idle: 'end_turn' },
  ]);
}
