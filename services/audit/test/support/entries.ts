/** The governed-call entry the audit tests append (one fixture; each test overrides what it is about). */
import { randomUUID } from 'node:crypto';
import { governedRecord } from '@agw/shared';
import type { ChainEntry } from '../../src/chain/record-hash';

export const governedEntry = (over: Partial<ChainEntry> = {}): ChainEntry => ({
  ...governedRecord(
    { action_id: randomUUID(), agent_id: 'agent-1', agent_type: 'assistant', agent_version: '1.0.0', tool: 'svc_web_search', method: 'search', session_id: null },
    { params: { q: 'x' }, decision: 'allow', violations: [], severity: 'none', execution_mode: 'agent_direct', bundle_revision: 'rev-test', details: {} },
  ),
  ...over,
});
