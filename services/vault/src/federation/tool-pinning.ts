/**
 * Pinning of federated tool definitions against "rug pulls" (docs/federation.md, "Pinned definitions"): what
 * one read of an upstream's tools does to the catalog. Pure: the caller reads the stored rows, applies the
 * writes and records the quarantines.
 *
 * For each tool the upstream offers (after the include/exclude filters):
 * - never seen: scanned for poisoning markers; flagged -> quarantined `suspicious_description`; else with
 *   `upstream_tool_approval: manual` -> quarantined `approval_required`; else, on the upstream's first
 *   successful read (`initial`) -> active, its definition pinned; on a later read -> quarantined
 *   `approval_required` whatever the mode (a tool that appears after registration is a rug pull by a new
 *   name until a human says otherwise); the same for a stored tool that was never pinned (it waited for a
 *   human and comes back with another definition);
 * - seen, same definition as pinned -> active (a quarantine it came back from is lifted), kept as the
 *   upstream writes it now (the same fingerprint, maybe another key order); a pin made when only six fields
 *   were pinned (tool-definition.ts, LEGACY_FIELDS) matches when those six are unchanged, and becomes a pin
 *   of the whole definition;
 * - seen, another definition -> quarantined `tool_definition_changed` with the new one as candidate (the
 *   markers of the candidate listed); the pinned definition stays what a human approved;
 * - a candidate that is already waiting with this same definition is left as it is (no second alert; a
 *   legacy candidate becomes the whole definition, still without an alert).
 * A stored tool the upstream no longer offers becomes `absent` (its pin is kept: if it comes back changed,
 * it is quarantined). Approving makes the candidate the pinned definition.
 *
 * The plan yields to the event loop between tools (setImmediate): a read of many tools never holds the
 * vault's loop for longer than the scan of one definition, which poisoning-scanner.ts bounds.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { type PoisoningMarker, scanToolDefinition } from './poisoning-scanner';
import { type ToolDefinition, definitionDiff, definitionSha256, isLegacyForm, legacyDefinitionSha256 } from './tool-definition';
import type { ToolRow, ToolWrite } from './upstream.repository';

export type QuarantineReason = 'tool_definition_changed' | 'suspicious_description' | 'approval_required';

export interface Quarantine {
  tool: string;
  reason: QuarantineReason;
  pinned_sha256: string | null;
  candidate_sha256: string;
  markers: PoisoningMarker[];
  diff: ReturnType<typeof definitionDiff>;
}

export interface PinningPlan {
  writes: ToolWrite[];
  /** tools newly quarantined (or with a new candidate) by this read */
  quarantined: Quarantine[];
}

export interface PinningOptions {
  /** the upstream's first successful read (its registration, or the first read that reached it): new tools follow `mode` */
  initial: boolean;
}

/** Lets every callback that is due run before the next step. */

export async function planPinning(stored: ToolRow[], offered: ToolDefinition[], mode: 'auto' | 'manual', options: PinningOptions): Promise<PinningPlan> {
  const byName = new Map(stored.map((r) => [r.name, r]));
  const writes: ToolWrite[] = [];
  const quarantined: Quarantine[] = [];
  const seen = new Set<string>();
  for (const def of offered) {
    if (seen.has(def.name)) continue; // an upstream listing a name twice: the first counts
    if (seen.size > 0) await nextTurn();
    seen.add(def.name);
    const sha = definitionSha256(def);
    const row = byName.get(def.name);
    const pinnedSha = row?.pinned_sha256 ?? null;
    if (pinnedSha === sha || (row && legacyMatch(row.pinned, pinnedSha, def))) {
      // the same definition: kept as the upstream wrote it now (its key order), the whole of it for a legacy pin
      if (row?.state !== 'active' || row.candidate_sha256 || pinnedSha !== sha || !sameText(row.pinned, def)) writes.push(activeWrite(def.name, def, sha));
      continue;
    }
    if (row?.state === 'quarantined' && (row.candidate_sha256 === sha || legacyMatch(row.candidate, row.candidate_sha256, def))) {
      // already waiting for a human (no second alert); the candidate kept as the upstream wrote it, whole
      if (row.candidate_sha256 !== sha || !sameText(row.candidate, def)) {
        writes.push({ name: def.name, state: 'quarantined', reason: row.reason, markers: scanToolDefinition(def), pinned: row.pinned, pinned_sha256: pinnedSha, candidate: def as unknown as Record<string, unknown>, candidate_sha256: sha });
      }
      continue;
    }
    const markers = scanToolDefinition(def);
    const reason: QuarantineReason | null = pinnedSha
      ? 'tool_definition_changed'
      : markers.length
        ? 'suspicious_description'
        : mode === 'manual' || !options.initial // never pinned: a human has not seen it
          ? 'approval_required'
          : null;
    if (!reason) {
      writes.push(activeWrite(def.name, def, sha));
      continue;
    }
    writes.push({
      name: def.name,
      state: 'quarantined',
      reason,
      markers,
      pinned: row?.pinned ?? null,
      pinned_sha256: pinnedSha,
      candidate: def as unknown as Record<string, unknown>,
      candidate_sha256: sha,
    });
    quarantined.push({ tool: def.name, reason, pinned_sha256: pinnedSha, candidate_sha256: sha, markers, diff: definitionDiff((row?.pinned as unknown as ToolDefinition) ?? null, def) });
  }
  for (const row of stored) {
    if (!seen.has(row.name) && row.state !== 'absent') {
      writes.push({ name: row.name, state: 'absent', reason: null, markers: [], pinned: row.pinned, pinned_sha256: row.pinned_sha256, candidate: null, candidate_sha256: null });
    }
  }
  return { writes, quarantined };
}

/**
 * A definition stored before the whole definition was pinned (its six legacy fields only) with the
 * fingerprint of those six: it matches `def` when they are unchanged, whatever else `def` carries now.
 */
function legacyMatch(stored: Record<string, unknown> | null, storedSha: string | null, def: ToolDefinition): boolean {
  return storedSha !== null && isLegacyForm(stored) && storedSha === legacyDefinitionSha256(def);
}

/** The same JSON text: the same fields in the same key order. */
const sameText = (stored: unknown, def: ToolDefinition) => JSON.stringify(stored) === JSON.stringify(def);

function activeWrite(name: string, def: unknown, sha: string): ToolWrite {
  return { name, state: 'active', reason: null, markers: [], pinned: def as Record<string, unknown>, pinned_sha256: sha, candidate: null, candidate_sha256: null };
}

/** The write that approves a quarantined tool's candidate (null when there is nothing to approve). */
export function approvalWrite(row: ToolRow, by: string, now = new Date()): ToolWrite | null {
  if (row.state !== 'quarantined' || !row.candidate || !row.candidate_sha256) return null;
  return {
    name: row.name,
    state: 'active',
    reason: null,
    markers: [],
    pinned: row.candidate,
    pinned_sha256: row.candidate_sha256,
    candidate: null,
    candidate_sha256: null,
    approved_at: now,
    approved_by: by,
  };
}
