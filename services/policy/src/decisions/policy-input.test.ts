/** input.upstream.connection (docs/federation.md, "Upstreams that need OAuth"): present for a call of an upstream that needs OAuth only, and kept through the call's message. */
import { policyInput, toolCallFacts, toolCallMessage } from './policy-evaluation';

const base = { agentId: 'a', agentType: 't', agentVersion: '1', tool: 'github', method: 'create_issue', paramsJson: '{}', piiDetected: false, sessionId: '' };

test('a per_user upstream call: input.upstream.connection names the mode and the human', () => {
  const facts = toolCallFacts({ ...base, upstreamConnection: 'per_user', upstreamUserId: 'u-1' }, {});
  expect(policyInput(facts).upstream).toEqual({ connection: { mode: 'per_user', user_id: 'u-1' } });
  expect(toolCallMessage(facts, '{}')).toMatchObject({ upstreamConnection: 'per_user', upstreamUserId: 'u-1' });
});

test('a shared one has no human; any other call has no input.upstream', () => {
  expect(policyInput(toolCallFacts({ ...base, upstreamConnection: 'shared', upstreamUserId: '' }, {})).upstream).toEqual({ connection: { mode: 'shared', user_id: null } });
  expect(policyInput(toolCallFacts(base, {}))).not.toHaveProperty('upstream');
});
