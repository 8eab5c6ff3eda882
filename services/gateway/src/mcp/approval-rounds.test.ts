/**
 * The signed requestState of approvals over MCP (approval-rounds.ts): what verifies, and each refusal by
 * name; what a client declared it can wait with. The rows behind them are tested against the running fleet
 * (test/e2e/mcp-approvals.e2e.test.ts).
 */
import { randomBytes } from 'node:crypto';
import { ProtocolError as McpError } from '@modelcontextprotocol/server';
import { ApprovalRounds, RequestStateSigner, clientAbilitiesOf } from './approval-rounds';

let now = 1_000_000;
const key = randomBytes(32);
const unused = {
  get: async () => {
    throw new Error('not read by these tests');
  },
  decide: async () => undefined,
};
const rounds = new ApprovalRounds(unused, new RequestStateSigner(key), { consoleOrigin: 'https://gw.example', holdMs: 0, stateTtlMs: 60_000, taskPollMs: 2000, clock: () => now });
const caller = { tenantId: 't-1', keyHash: 'k-1', agentId: 'agent' };
const args = { a: 5000, b: 1 };
const action = '1d8d763f-c033-460a-9b24-c8cd3b801a1f';

function stateOf(): string {
  const r = rounds.inputRequired(caller, 'fx__add', args, action) as { requestState: string; inputRequests: Record<string, { params: { url: string } }> };
  expect(r.inputRequests.agw_approval.params.url).toBe(`https://gw.example/approvals/${action}`);
  return r.requestState;
}

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(McpError);
    expect((e as McpError).code).toBe(-32602);
    return (e as Error).message;
  }
  throw new Error('not refused');
}

test('a state verifies for the same caller, tool and arguments (in any key order): it names the action', () => {
  expect(rounds.verifyState(stateOf(), caller, 'fx__add', { b: 1, a: 5000 })).toBe(action);
});

test('altered, forged, another caller’s, expired, or another call’s state: each refused by name', () => {
  const state = stateOf();
  const [body, mac] = state.split('.');
  const payload = JSON.parse(Buffer.from(body, 'base64url').toString());
  const altered = `${Buffer.from(JSON.stringify({ ...payload, a: '00000000-0000-4000-8000-000000000000' })).toString('base64url')}.${mac}`;
  expect(refusal(() => rounds.verifyState(altered, caller, 'fx__add', args))).toMatch(/not issued by this gateway or was altered/);
  const forged = new RequestStateSigner(randomBytes(32)).sign(payload);
  expect(refusal(() => rounds.verifyState(forged, caller, 'fx__add', args))).toMatch(/not issued by this gateway/);
  expect(refusal(() => rounds.verifyState('x'.repeat(5000), caller, 'fx__add', args))).toMatch(/not issued/);
  expect(refusal(() => rounds.verifyState(42, caller, 'fx__add', args))).toMatch(/not issued/);
  expect(refusal(() => rounds.verifyState(state, { ...caller, keyHash: 'k-2' }, 'fx__add', args))).toMatch(/issued to another caller/);
  expect(refusal(() => rounds.verifyState(state, { ...caller, tenantId: 't-2' }, 'fx__add', args))).toMatch(/issued to another caller/);
  expect(refusal(() => rounds.verifyState(state, caller, 'fx__add', { a: 5000, b: 2 }))).toMatch(/belongs to another call/);
  expect(refusal(() => rounds.verifyState(state, caller, 'fx__sub', args))).toMatch(/belongs to another call/);
  now += 60_001;
  expect(refusal(() => rounds.verifyState(state, caller, 'fx__add', args))).toMatch(/expired/);
});

test('what a client can wait with, from its per-request capabilities', () => {
  const caps = (c: unknown) => clientAbilitiesOf({ 'io.modelcontextprotocol/clientCapabilities': c });
  expect(caps({ extensions: { 'io.modelcontextprotocol/tasks': {} } })).toEqual({ tasks: true, urlElicitation: false });
  expect(caps({ elicitation: { url: {} } })).toEqual({ tasks: false, urlElicitation: true });
  // form-only elicitation (an empty object is form mode) cannot open a page
  expect(caps({ elicitation: {} })).toEqual({ tasks: false, urlElicitation: false });
  expect(clientAbilitiesOf(undefined)).toEqual({ tasks: false, urlElicitation: false });
});

test('a connect round (upstream_authorization_required): a URL elicitation to the upstream’s console page, a state naming the upstream that is no approval state', () => {
  const r = rounds.connectRequired(caller, 'github__create_issue', args, 'github', action) as {
    resultType: string;
    requestState: string;
    inputRequests: Record<string, { method: string; params: { mode: string; url: string; message: string } }>;
  };
  expect(r.resultType).toBe('input_required');
  expect(r.inputRequests.agw_connect).toMatchObject({ method: 'elicitation/create', params: { mode: 'url', url: 'https://gw.example/tools/github' } });
  expect(r.inputRequests.agw_connect.params.message).toMatch(/Connect/);
  expect(rounds.connectStateOf(r.requestState, caller, 'github__create_issue', { b: 1, a: 5000 })).toBe('github');
  expect(refusal(() => rounds.verifyState(r.requestState, caller, 'github__create_issue', args))).toMatch(/asks to connect an upstream/);
  expect(refusal(() => rounds.connectStateOf(r.requestState, { ...caller, keyHash: 'k-2' }, 'github__create_issue', args))).toMatch(/issued to another caller/);
  expect(refusal(() => rounds.connectStateOf(r.requestState, caller, 'github__create_issue', { a: 1 }))).toMatch(/belongs to another call/);
  // an approval round's state asks to connect nothing
  expect(rounds.connectStateOf(stateOf(), caller, 'fx__add', args)).toBeUndefined();
});

describe('a relayed round (an upstream’s own input_required)', () => {
  const upstream = { inputRequests: { confirm: { method: 'elicitation/create', params: { mode: 'form', message: 'Delete /tmp/x?' } } }, requestState: 'confirm:/tmp/x' };

  test('the upstream’s input requests go out as sent, its state inside ours, back on the retry of the same call', () => {
    const r = rounds.relayInput(caller, 'up__confirm_delete', args, action, upstream) as { resultType: string; inputRequests: unknown; requestState: string };
    expect(r.resultType).toBe('input_required');
    expect(r.inputRequests).toEqual(upstream.inputRequests);
    expect(r.requestState).not.toBe(upstream.requestState);
    expect(rounds.relayStateOf(r.requestState, caller, 'up__confirm_delete', { b: 1, a: 5000 })).toEqual({ upstreamState: 'confirm:/tmp/x' });
    // an upstream without a state of its own
    const bare = rounds.relayInput(caller, 'up__confirm_delete', args, action, { inputRequests: upstream.inputRequests }) as { requestState: string };
    expect(rounds.relayStateOf(bare.requestState, caller, 'up__confirm_delete', args)).toEqual({});
  });

  test('refused for another caller, other arguments, once altered, and as an approval’s state; an approval’s state is no relay', () => {
    const { requestState } = rounds.relayInput(caller, 'up__confirm_delete', args, action, upstream) as { requestState: string };
    expect(refusal(() => rounds.relayStateOf(requestState, { ...caller, tenantId: 't-2' }, 'up__confirm_delete', args))).toMatch(/another caller/);
    expect(refusal(() => rounds.relayStateOf(requestState, caller, 'up__confirm_delete', { a: 5000, b: 2 }))).toMatch(/another call/);
    const [body, mac] = requestState.split('.');
    const altered = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(body, 'base64url').toString()), u: 'confirm:/etc/passwd' })).toString('base64url');
    expect(refusal(() => rounds.relayStateOf(`${altered}.${mac}`, caller, 'up__confirm_delete', args))).toMatch(/not issued by this gateway/);
    expect(refusal(() => rounds.verifyState(requestState, caller, 'up__confirm_delete', args))).toMatch(/upstream's own input request/);
    expect(rounds.relayStateOf(stateOf(), caller, 'fx__add', args)).toBeUndefined();
  });

  test('an upstream state too long to carry is an error result, not a round', () => {
    const r = rounds.relayInput(caller, 'up__confirm_delete', args, action, { ...upstream, requestState: 'x'.repeat(9000) }) as { isError?: boolean };
    expect(r.isError).toBe(true);
  });
});
