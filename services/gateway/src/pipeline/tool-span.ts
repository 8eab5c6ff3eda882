/**
 * The attributes of a governed call's span, in the OpenTelemetry GenAI semantic conventions for tool
 * execution (`gen_ai.operation.name` = `execute_tool`, `gen_ai.tool.name`, `gen_ai.tool.call.id`,
 * `gen_ai.tool.type`, `gen_ai.agent.id`) and the gateway's own: the decision, the audit record's id and the
 * receipt's RFC 9162 leaf hash (read from the receipt note), so a trace leads to the record's proof
 * (`GET /api/audit/proof?record_id=…`; docs/evidence.md, "Traces").
 */
import type { ToolCallOutcome } from './tool-call.pipeline';
import type { ToolCallRequest } from './tool-call.schema';

export function toolSpanAttributes(call: ToolCallRequest): Record<string, string> {
  return {
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': call.tool,
    'gen_ai.tool.type': 'function',
    'gen_ai.agent.id': call.agent_id,
    'agw.tool.method': call.method,
  };
}

export function outcomeSpanAttributes(o: ToolCallOutcome & { receipt?: { note: string } }): Record<string, string | number> {
  const note = o.receipt?.note ?? '';
  const record = /^record (\d+)$/m.exec(note)?.[1];
  const leaf = /^leaf ([A-Za-z0-9+/=]+)$/m.exec(note)?.[1];
  return {
    'gen_ai.tool.call.id': o.action_id,
    'agw.decision': o.kind,
    ...(record ? { 'agw.audit.record_id': Number(record) } : {}),
    ...(leaf ? { 'agw.receipt.leaf_hash': Buffer.from(leaf, 'base64').toString('hex') } : {}),
  };
}
