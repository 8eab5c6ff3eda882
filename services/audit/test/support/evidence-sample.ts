/**
 * The compliance export's sample: the i-th (0..11) of the twelve governed calls the audit test appends
 * (compliance-evidence.int.test.ts) and the gateway's export test presents as GetEvidence answers them
 * (services/gateway/src/compliance/compliance-export.test.ts), without the action id, time and hashes each
 * side sets itself. Every fourth call is denied; the tools alternate.
 */
export const evidenceSampleCall = (i: number) => ({
  agent_id: `agent-${i % 3}`,
  agent_type: 'assistant',
  agent_version: '1.0.0',
  tool: i % 2 ? 'svc_send_email' : 'svc_web_search',
  method: 'run',
  params: { i },
  decision: i % 4 === 0 ? 'deny' : 'allow',
  violations: i % 4 === 0 ? ['consumer_email_blocked'] : [],
  severity: i % 4 === 0 ? 'high' : 'none',
  alert_tier: null,
  requires_human: false,
  execution_mode: null,
  source: 'mcp_governed',
  session_id: null,
  bundle_revision: 'rev-9',
  details: {},
});
