/**
 * The types of the compliance export package (docs/compliance-export.md): `ExportPackage`, the JSON
 * document itself, and `AnchorReference`, one anchor of its `anchors` section. Kept apart from
 * compliance-exporter.ts, which builds the package, so that the PDF renderer can read the package type
 * without importing the exporter (that imports the renderer); compliance-exporter.ts re-exports both.
 */
import type { RangeStats } from './export.repository';

export interface AnchorReference {
  tree_index: number;
  tree_size: number;
  tenant_root: string;
  aggregate_root: string;
  leaf_index: number;
  leaf_count: number;
  aggregate_proof: string[];
  tx_hash: string;
  block_number: number;
  anchored_at: string;
  network: string;
  chain_id: number;
  contract_address: string;
  /** null on chains without an explorer (the local chain) */
  explorer_tx_url: string | null;
  /** SHA-256 of the signed checkpoint note the anchored leaf covers (docs/evidence.md); null: a leaf without it */
  checkpoint_sha256: string | null;
}

export interface ExportPackage {
  package: { format_version: string; standard: string; generated_at: string; tenant_id: string; range: { from: string; to: string } };
  summary: RangeStats & { records_exported: number; truncated: boolean };
  audit_records: Array<Record<string, unknown>>;
  chain_verification: Record<string, unknown>;
  merkle: {
    algorithm: string;
    leaf: string;
    tree_heads_total: number;
    latest_tree: Record<string, unknown> | null;
    trees_in_range: Array<Record<string, unknown>>;
  };
  anchors: { status: string; references: AnchorReference[]; error?: string };
  sample_inclusion_proofs: Array<Record<string, unknown>>;
  policy_snapshot: Record<string, unknown>;
  /** What an offline verifier needs beyond the sections above (docs/evidence.md); added in format 1.1. */
  evidence: {
    status: string;
    error?: string;
    /** C2SP tlog-checkpoint signed notes of every tree head, oldest first */
    checkpoints: Array<{ tree_index: number; tree_size: number; merkle_root: string; checkpoint_sha256: string; note: string }>;
    verifier_key: string | null;
    origin: string | null;
    /** RFC 9162 consistency proofs between successive tree heads (the `merkle.tree_heads` list) */
    tree_heads: Array<{ tree_index: number; tree_size: number; merkle_root: string }>;
    consistency_proofs: Array<{ from_size: number; to_size: number; proof: string[] }>;
    chain: { chain_id: number | null; contract_address: string | null; network: string | null };
  };
}
