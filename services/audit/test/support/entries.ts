/** The governed-call entry the audit tests append (one fixture; each test overrides what it is about). */
import { randomUUID } from 'node:crypto';
import type { ChainEntry } from '../../src/chain/record-hash';

export const governedEntry = (over: Partial<ChainEntry> = {}): ChainEntry => ({
  action_id: randomUUID(),
  agent_id: 'agent-1',
  agent_type: 'assistant',
  agent_version: '1.0.0',
  tool: 'svc_web_search',
  method: 'search',
  params: { q: 'x' },
  decision: 'allow',
  violations: [],
  severity: 'none',
  alert_tier: null,
  requires_human: false,
  execution_mode: 'agent_direct',
  source: 'mcp_governed',
  session_id: null,
  bundle_revision: 'rev-test',
  details: {},
  requested_at: new Date().toISOString(),
  ...over,
});
