/** The governed-call entry the audit tests append (one fixture; each test overrides what it is about). */
import { randomUUID } from 'node:crypto';
import { type DecisionInputRow, governedRecord } from '@agw/shared';
import type { ChainEntry } from '../../src/chain/record-hash';

export const governedEntry = (over: Partial<ChainEntry> = {}): ChainEntry => ({
  ...governedRecord(
    { action_id: randomUUID(), agent_id: 'agent-1', agent_type: 'assistant', agent_version: '1.0.0', tool: 'svc_web_search', method: 'search', session_id: null },
    { params: { q: 'x' }, decision: 'allow', violations: [], severity: 'none', execution_mode: 'agent_direct', bundle_revision: 'rev-test', details: {} },
  ),
  ...over,
});

/** The policy's replay input of an entry, as the append carries it (an audit_decision_inputs row). */
export const decisionInputOf = (e: ChainEntry): DecisionInputRow => ({
  action_id: e.action_id,
  agent_id: e.agent_id,
  agent_type: e.agent_type,
  agent_version: e.agent_version,
  tool: e.tool,
  method: e.method,
  session_id: null,
  stored_params: e.params,
  pii_detected: false,
  behavioral: { action_count_1h: 1 },
  decision: 'allow',
  violations: [],
  severity: 'none',
  bundle_revision: 'rev-test',
  passes: 2,
  evaluated_at: new Date(),
});
