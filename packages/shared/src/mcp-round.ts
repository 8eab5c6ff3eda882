/**
 * ExecuteRequest's relayed multi round-trip (agw.vault.v1.McpRound, docs/mcp.md "Inside a call") and, for one
 * release, its previous form (`mcp_round_json`: `{relay, clientCapabilities?, inputResponses?, requestState?}`;
 * docs/architecture.md, "Changing a contract"): the gateway writes both, the vault reads the message, or the
 * text when only that is set (a gateway of the previous release). Removed with the text in the next release.
 */
import type { vault } from '@agw/proto';
import { InputError } from './errors';
import { fromJson, objectFromJson, toJson } from './json-text';

/** The previous release's JSON text of a round. */
export function previousMcpRoundJson(r: vault.McpRound): string {
  return JSON.stringify({
    relay: r.relay,
    ...(r.client_capabilities ? { clientCapabilities: objectFromJson(r.client_capabilities, 'mcp_round.client_capabilities') } : {}),
    ...(r.input_responses ? { inputResponses: objectFromJson(r.input_responses, 'mcp_round.input_responses') } : {}),
    ...(r.request_state !== undefined ? { requestState: r.request_state } : {}),
  });
}

const isObject = (x: unknown): x is Record<string, unknown> => !!x && typeof x === 'object' && !Array.isArray(x);

/** The round of an ExecuteRequest: its message, else the previous release's text (checked as that release did), else none. */
export function mcpRoundOfRequest(req: Pick<vault.ExecuteRequest, 'mcp_round' | 'mcp_round_json'>): vault.McpRound | undefined {
  if (req.mcp_round || !req.mcp_round_json) return req.mcp_round;
  const v = fromJson({ text: req.mcp_round_json }, 'mcp_round_json');
  if (
    !isObject(v) ||
    (v.inputResponses !== undefined && !isObject(v.inputResponses)) ||
    (v.clientCapabilities !== undefined && !isObject(v.clientCapabilities)) ||
    (v.requestState !== undefined && typeof v.requestState !== 'string')
  ) {
    throw InputError.at(['mcp_round_json'], 'must be {relay, clientCapabilities?: object, inputResponses?: object, requestState?: string}', 'value_error');
  }
  return {
    relay: v.relay === true,
    client_capabilities: toJson(v.clientCapabilities),
    input_responses: toJson(v.inputResponses),
    ...(v.requestState !== undefined ? { request_state: v.requestState as string } : {}),
  };
}
