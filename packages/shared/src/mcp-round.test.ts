/** ExecuteRequest's relayed round and, for one release, the previous release's text of it (a rolling update). */
import { vault } from '@agw/proto';
import { InputError } from './errors';
import { mcpRoundField, mcpRoundOfRequest } from './mcp-round';

const round: vault.McpRound = {
  relay: true,
  client_capabilities: { text: '{"elicitation":{}}' },
  input_responses: { text: '{"confirm":{"action":"accept","content":{"ok":true}}}' },
  request_state: 'opaque-state-é',
};

test('the message is read as it is; the previous release text alone is read into the same message', () => {
  expect(mcpRoundOfRequest({ mcp_round: round, mcp_round_json: 'ignored' })).toBe(round);
  // what the gateway writes: the message, and beside it the text the previous release's gateway wrote
  const fields = mcpRoundField({ clientCapabilities: { elicitation: {} }, inputResponses: { confirm: { action: 'accept', content: { ok: true } } }, requestState: 'opaque-state-é' });
  expect(fields.mcp_round).toEqual(round);
  const text = fields.mcp_round_json!;
  expect(text).toBe('{"relay":true,"clientCapabilities":{"elicitation":{}},"inputResponses":{"confirm":{"action":"accept","content":{"ok":true}}},"requestState":"opaque-state-é"}');
  expect(mcpRoundOfRequest({ mcp_round: undefined, mcp_round_json: text })).toEqual(round);
  expect(mcpRoundField(undefined)).toEqual({ mcp_round: undefined });
  // across the wire, as a previous release's vault receives what this gateway sends
  const req = vault.ExecuteRequest.decode(vault.ExecuteRequest.encode(vault.ExecuteRequest.fromPartial({ mcp_round: round, mcp_round_json: text })).finish());
  expect(req.mcp_round_json).toBe(text);
  expect(mcpRoundOfRequest({ mcp_round: undefined, mcp_round_json: '{"relay":true}' })).toEqual({ relay: true, client_capabilities: undefined, input_responses: undefined });
  expect(mcpRoundOfRequest({ mcp_round: undefined, mcp_round_json: undefined })).toBeUndefined();
});

test('a previous release text of another shape is invalid input naming the field', () => {
  for (const text of ['[1]', '{"relay":true,"inputResponses":[1]}', '{"requestState":3}', '{"relay":']) {
    let e: unknown;
    try {
      mcpRoundOfRequest({ mcp_round: undefined, mcp_round_json: text });
    } catch (x) {
      e = x;
    }
    expect(e).toBeInstanceOf(InputError);
    expect((e as InputError).issues[0].loc).toEqual(['mcp_round_json']);
  }
});
