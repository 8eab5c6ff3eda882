/** input.upstream.connection (docs/federation.md, "Upstreams that need OAuth"): present for a call of an upstream that needs OAuth only, read from the call's message. */
import { policyInput, toolCallFacts } from './policy-evaluation';

const base = { agent_id: 'a', agent_type: 't', agent_version: '1', tool: 'github', method: 'create_issue', params: { text: '{}' }, params_json: '{}', pii_detected: false, session_id: '' };

test('a per_user upstream call: input.upstream.connection names the mode and the human', () => {
  const facts = toolCallFacts({ ...base, upstream_connection: 'per_user', upstream_user_id: 'u-1' }, {});
  expect(policyInput(facts).upstream).toEqual({ connection: { mode: 'per_user', user_id: 'u-1' } });
});

test('a shared one has no human; any other call has no input.upstream', () => {
  expect(policyInput(toolCallFacts({ ...base, upstream_connection: 'shared', upstream_user_id: '' }, {})).upstream).toEqual({ connection: { mode: 'shared', user_id: null } });
  expect(policyInput(toolCallFacts(base, {}))).not.toHaveProperty('upstream');
});
