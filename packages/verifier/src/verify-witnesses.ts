/**
 * The witness check of an export (agw-verify --witness … [--witness-quorum k]): the latest signed checkpoint
 * carries valid C2SP tlog-cosignatures of at least `quorum` of the given witnesses. The latest is enough:
 * every earlier checkpoint is a prefix of it (the export's consistency proofs), so a witnessed latest head
 * rules out a split view of the whole log up to it.
 */
import { type CosignerKey, checkWitnessPolicy } from './cosignature';
import type { ComplianceExport } from './export-format';
import type { CheckResult } from './verify-export';

export function verifyWitnesses(doc: ComplianceExport, witnesses: CosignerKey[], quorum: number): CheckResult {
  const name = 'witnesses';
  const cps = [...(doc.evidence?.checkpoints ?? [])].sort((a, b) => a.tree_size - b.tree_size);
  const latest = cps[cps.length - 1];
  if (!latest) return { name, ok: false, detail: 'the export has no signed checkpoint to be witnessed' };
  const note = latest.cosigned_note ?? latest.note;
  try {
    const r = checkWitnessPolicy(note, witnesses, quorum);
    const who = r.cosigned.map((c) => `${c.name} at ${new Date(c.time * 1000).toISOString()}`).join(', ') || 'none';
    return r.ok
      ? { name, ok: true, detail: `${r.cosigned.length} of ${witnesses.length} witnesses cosigned the latest checkpoint (size ${latest.tree_size}; policy ${quorum} of ${witnesses.length}): ${who}` }
      : { name, ok: false, detail: `only ${r.cosigned.length} of the ${quorum} cosignatures the policy needs on the latest checkpoint (size ${latest.tree_size}); missing: ${r.missing.join(', ')}` };
  } catch (e) {
    return { name, ok: false, detail: `a cosignature of the latest checkpoint (size ${latest.tree_size}) is invalid: ${(e as Error).message}` };
  }
}
