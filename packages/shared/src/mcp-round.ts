/**
 * ExecuteRequest's relayed multi round-trip (agw.vault.v1.McpRound, docs/mcp.md "Inside a call") and, for one
 * release, its previous form (`mcp_round_json`: `{relay, clientCapabilities?, inputResponses?, requestState?}`;
 * docs/architecture.md, "Changing a contract"): the gateway writes both, the vault reads the message, or the
 * text when only that is set (a gateway of the previous release). Removed with the text in the next release.
 */
import type { vault } from '@agw/proto';
import { InputError } from './errors';
import { fromJson, toJson } from './json-text';

/** What a relayed round carries, as the caller holds it (the MCP client's declarations and answers, the upstream's state). */
export interface McpRoundInput {
  clientCapabilities?: Record<string, unknown>;
  inputResponses?: Record<string, unknown>;
  requestState?: string;
}

/**
 * The round fields of an ExecuteRequest for a relayed round (none for a plain call): the message and, for one
 * release, the previous release's text, made from the same values (the text the previous release's gateway
 * wrote, byte for byte), as `{ ...mcpRoundField(round) }`.
 */
export function mcpRoundField(r: McpRoundInput | undefined): Pick<vault.ExecuteRequest, 'mcp_round'> & { mcp_round_json?: string } {
  if (!r) return { mcp_round: undefined };
  return {
    mcp_round: { relay: true, client_capabilities: toJson(r.clientCapabilities), input_responses: toJson(r.inputResponses), request_state: r.requestState },
    mcp_round_json: JSON.stringify({ relay: true, clientCapabilities: r.clientCapabilities, inputResponses: r.inputResponses, requestState: r.requestState }),
  };
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
