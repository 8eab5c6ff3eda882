/**
 * The exact bytes of the hash chain (documented in docs/audit.md):
 *   record_hash = hex(SHA-256( UTF-8(JCS(content)) || UTF-8(prev_hash) ))
 * where JCS is RFC 8785 canonical JSON, `content` is the object built by `hashedContent`, and prev_hash
 * is the previous record's record_hash (64 lowercase hex chars) or the literal `GENESIS` for the first.
 */
import { canonicalJson, sha256Hex } from '@agw/shared';

export const GENESIS = 'GENESIS';

export interface ChainEntry {
  action_id: string;
  agent_id: string;
  agent_type: string;
  agent_version: string;
  tool: string;
  method: string;
  params: Record<string, unknown>;
  decision: string;
  violations: string[];
  severity: string;
  alert_tier: string | null;
  requires_human: boolean;
  execution_mode: string | null;
  source: string;
  session_id: string | null;
  bundle_revision: string;
  details: Record<string, unknown>;
  /** ISO 8601 UTC with milliseconds, e.g. 2026-11-21T23:59:59.123Z */
  requested_at: string;
}

/** The object whose canonical JSON is hashed: every field of the entry, in JCS key order. */
export function hashedContent(e: ChainEntry): Record<string, unknown> {
  return {
    action_id: e.action_id,
    agent_id: e.agent_id,
    agent_type: e.agent_type,
    agent_version: e.agent_version,
    tool: e.tool,
    method: e.method,
    params: e.params,
    decision: e.decision,
    violations: e.violations,
    severity: e.severity,
    alert_tier: e.alert_tier,
    requires_human: e.requires_human,
    execution_mode: e.execution_mode,
    source: e.source,
    session_id: e.session_id,
    bundle_revision: e.bundle_revision,
    details: e.details,
    requested_at: e.requested_at,
  };
}

/** The canonical JSON text of the hashed content (what precedes prev_hash in the hashed bytes). */
export function canonicalContent(entry: ChainEntry): string {
  return canonicalJson(hashedContent(entry));
}

export function recordHash(entry: ChainEntry, prevHash: string): string {
  return sha256Hex(Buffer.concat([Buffer.from(canonicalContent(entry), 'utf8'), Buffer.from(prevHash, 'utf8')]));
}
