/**
 * Honest MCP answers (issue 42, item 8): a model reads `isError` to tell a failure from a success, so a
 * refused or failed call must never come back as a normal result. The decisions as MCP results, and the
 * federated names tools/list does not show (a quarantined tool), resolved against the catalog's answers.
 */
import type { GatewayDeps } from '../deps';
import type { ToolTarget } from '../federation/federated-catalog';
import type { ToolCallOutcome } from '../pipeline/tool-call.pipeline';
import { type McpToolResult, type McpTools, toMcpResult, unlistedFederatedTool } from './governed-tools';

const textOf = (r: McpToolResult) => r.content.map((c) => String(c.text ?? '')).join('\n');
const allowed = (over: Partial<Extract<ToolCallOutcome, { kind: 'allowed' }>>): Extract<ToolCallOutcome, { kind: 'allowed' }> => ({
  kind: 'allowed',
  action_id: 'act-1',
  execution_mode: 'gateway_brokered',
  violations: [],
  severity: 'none',
  ...over,
});

describe('toMcpResult', () => {
  it.each([
    [502, { error: 'upstream blocked: upstream host x resolves to a non-public address' }, 'status 502 (upstream blocked: upstream host x'],
    [504, { error: 'upstream timed out after 10000 ms' }, 'status 504 (upstream timed out'],
    [502, 'bad gateway', 'status 502 (bad gateway)'],
    [404, { message: 'no such thing' }, 'status 404'],
    [500, null, 'status 500'],
    [503, { error: 'x'.repeat(1000) }, `status 503 (${'x'.repeat(300)}…)`],
  ])('a brokered execution with status %s is an error result naming its cause', (status, body, cause) => {
    const r = toMcpResult(allowed({ execution_result: { status_code: status, body } }));
    expect(r.isError).toBe(true);
    const json = JSON.parse(textOf(r));
    expect(json).toMatchObject({ status: 'allowed', action_id: 'act-1', execution_result: { status_code: status } });
    expect(json.error).toContain('execution failed');
    expect(json.error).toContain(cause);
  });

  it('a brokered execution that succeeded is a normal result; so is an agent-direct allow', () => {
    for (const status of [200, 201, 204]) expect(toMcpResult(allowed({ execution_result: { status_code: status, body: { ok: true } } })).isError).toBeUndefined();
    expect(toMcpResult(allowed({ execution_mode: 'agent_direct' })).isError).toBeUndefined();
  });

  it('a federated execution that failed is an error result with its cause; a result the upstream sent passes as it is', () => {
    const failed = toMcpResult(allowed({ mcp_result: true, execution_result: { status_code: 502, body: { error: 'upstream x answered HTTP 502' } } }));
    expect(failed.isError).toBe(true);
    expect(textOf(failed)).toContain('upstream x answered HTTP 502');
    const ok = toMcpResult(allowed({ mcp_result: true, execution_result: { status_code: 200, body: { content: [{ type: 'text', text: 'pong' }] } } }));
    expect(ok).toMatchObject({ content: [{ type: 'text', text: 'pong' }], _meta: { 'io.agw/action_id': 'act-1' } });
    expect(ok.isError).toBeUndefined();
  });

  it('a denial is an error result with its violations and, where there is one, its reason', () => {
    const message = 'Tool q/tool is quarantined: its definition changed since it was pinned; a human must approve it (POST /api/upstreams/q/tools/tool/approve)';
    const r = toMcpResult({ kind: 'denied', action_id: 'act-2', violations: ['tool_definition_changed'], severity: 'high', alert_tier: 'escalate', message });
    expect(r.isError).toBe(true);
    expect(JSON.parse(textOf(r))).toEqual({ status: 'denied', action_id: 'act-2', violations: ['tool_definition_changed'], severity: 'high', alert_tier: 'escalate', message });
  });
});

describe('unlistedFederatedTool', () => {
  /** the catalog's targets by `upstream/tool` (anything else: no such upstream) */
  const depsWith = (targets: Record<string, ToolTarget>, asked: string[] = []) =>
    ({
      federation: {
        target: async (_t: string, upstream: string, tool: string) => {
          asked.push(`${upstream}/${tool}`);
          return targets[`${upstream}/${tool}`] ?? { upstream: false, executable: false };
        },
      },
    }) as unknown as GatewayDeps;
  const quarantined: ToolTarget = { upstream: true, executable: false, violation: 'tool_definition_changed', message: 'quarantined' };
  const none: McpTools = { federated: new Map(), credential: [] };

  it('names a quarantined tool of an upstream (also one whose name ends with "_")', async () => {
    expect(await unlistedFederatedTool(depsWith({ 'q/tool': quarantined }), 't', none, 'q__tool')).toMatchObject({ name: 'q__tool', upstream: 'q', tool: 'tool' });
    expect(await unlistedFederatedTool(depsWith({ 'a_/b': { ...quarantined, violation: 'suspicious_description' } }), 't', none, 'a___b')).toMatchObject({ upstream: 'a_', tool: 'b' });
    expect(await unlistedFederatedTool(depsWith({ 'q/new': { ...quarantined, violation: 'approval_required' } }), 't', none, 'q__new')).toMatchObject({ tool: 'new' });
  });

  it('names nothing for a tool the upstream does not offer, an unknown upstream or a name without the separator', async () => {
    const d = depsWith({ 'q/gone': { upstream: true, executable: false, violation: 'upstream_tool_unknown', message: 'no tool' } });
    expect(await unlistedFederatedTool(d, 't', none, 'q__gone')).toBeUndefined();
    expect(await unlistedFederatedTool(d, 't', none, 'nobody__tool')).toBeUndefined();
    expect(await unlistedFederatedTool(d, 't', none, 'plain')).toBeUndefined();
  });

  it("asks at most two splits, and never outside a session's allowed tools", async () => {
    const asked: string[] = [];
    // an upstream name never holds "__": only the first split of this one is a candidate
    expect(await unlistedFederatedTool(depsWith({}, asked), 't', none, 'a__b__c__d__e')).toBeUndefined();
    expect(asked).toEqual(['a/b__c__d__e']);
    asked.length = 0;
    expect(await unlistedFederatedTool(depsWith({}, asked), 't', none, 'x______y')).toBeUndefined();
    expect(asked).toEqual(['x/____y', 'x_/___y']);
    const session: McpTools = { ...none, allowed: ['other__*'] };
    const seen: string[] = [];
    expect(await unlistedFederatedTool(depsWith({ 'q/tool': quarantined }, seen), 't', session, 'q__tool')).toBeUndefined();
    expect(seen).toEqual([]);
  });
});
