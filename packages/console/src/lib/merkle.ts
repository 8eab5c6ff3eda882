/**
 * RFC 9162 inclusion proofs checked in the browser with WebCrypto SHA-256: the console never trusts the
 * server's `verified` flag. leaf hash = SHA-256(0x00 || leaf), node = SHA-256(0x01 || left || right);
 * the path is folded as RFC 9162 section 2.1.3.2 says (docs/merkle-and-anchoring.md).
 */
export function unhex(hex: string): Uint8Array {
  if (!/^(?:[0-9a-fA-F]{2})*$/.test(hex)) throw new Error(`not hex: ${hex.slice(0, 16)}…`);
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

export const toHex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');

async function sha256(...parts: Uint8Array[]): Promise<Uint8Array> {
  const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    all.set(p, o);
    o += p.length;
  }
  return new Uint8Array(await crypto.subtle.digest('SHA-256', all));
}

export const leafHash = (leaf: Uint8Array) => sha256(Uint8Array.of(0), leaf);
const nodeHash = (l: Uint8Array, r: Uint8Array) => sha256(Uint8Array.of(1), l, r);

/** The root an inclusion proof leads to (RFC 9162 2.1.3.2), or null when the proof cannot be folded. */
export async function rootFromInclusionProof(leafHashBytes: Uint8Array, index: number, size: number, proof: Uint8Array[]): Promise<Uint8Array | null> {
  if (index < 0 || index >= size || leafHashBytes.length !== 32) return null;
  let fn = index;
  let sn = size - 1;
  let r = leafHashBytes;
  for (const p of proof) {
    if (sn === 0 || p.length !== 32) return null;
    if (fn % 2 === 1 || fn === sn) {
      r = await nodeHash(p, r);
      if (fn % 2 === 0) while (fn % 2 === 0 && fn !== 0) [fn, sn] = [fn / 2, Math.floor(sn / 2)];
    } else r = await nodeHash(r, p);
    [fn, sn] = [Math.floor(fn / 2), Math.floor(sn / 2)];
  }
  return sn === 0 ? r : null;
}

/**
 * The aggregate leaf of a tenant tree head: tenant_id (16 raw bytes) || tree_size (u64 BE) || root (32)
 * [|| SHA-256 of the head's signed checkpoint (32), when it had one when anchored] (services/anchor
 * aggregate-tree.ts; docs/evidence.md).
 */
export function aggregateLeaf(tenantId: string, treeSize: number, rootHex: string, checkpointSha256?: string | null): Uint8Array {
  const out = new Uint8Array(checkpointSha256 ? 88 : 56);
  out.set(unhex(tenantId.replace(/-/g, '')), 0);
  new DataView(out.buffer).setBigUint64(16, BigInt(treeSize));
  out.set(unhex(rootHex), 24);
  if (checkpointSha256) out.set(unhex(checkpointSha256), 56);
  return out;
}

export interface Step {
  label: string;
  ok: boolean;
  detail: string;
}

export interface InclusionInput {
  record_hash: string;
  leaf_index: number;
  tree_size: number;
  tree_index: number;
  proof: string[];
}

/**
 * Checks record -> tenant tree head (and, when given, the head's signed/listed root) -> anchored aggregate
 * root. Every comparison is done here; each step says what was compared.
 */
export async function verifyEvidence(o: {
  proof: InclusionInput;
  /** the tree head's root as the tree head list shows it (GET /audit/merkle/roots) */
  headRoot: string | null;
  anchor?: { tenantId: string; tree_index: number; tree_size: number; merkle_root: string; checkpoint_sha256?: string | null; aggregate_proof: { leaf_hex: string; leaf_index: number; tree_size: number; proof: string[] } } | null;
}): Promise<{ ok: boolean; steps: Step[]; computedRoot: string | null }> {
  const steps: Step[] = [];
  let computed: Uint8Array | null = null;
  try {
    const leaf = await leafHash(unhex(o.proof.record_hash));
    computed = await rootFromInclusionProof(leaf, o.proof.leaf_index, o.proof.tree_size, o.proof.proof.map(unhex));
  } catch {
    computed = null;
  }
  const computedHex = computed ? toHex(computed) : null;
  steps.push({
    label: 'Inclusion path folds to a root',
    ok: computedHex !== null,
    detail: computedHex ? `SHA-256 over ${o.proof.proof.length} proof nodes → ${computedHex}` : 'the proof does not fold for this leaf index and tree size',
  });
  if (computedHex !== null) {
    const same = o.headRoot !== null && computedHex === o.headRoot.toLowerCase();
    steps.push({ label: `Root equals tree head #${o.proof.tree_index}`, ok: same, detail: o.headRoot ? `tree head root ${o.headRoot}` : 'tree head not found' });
  }
  if (o.anchor && computedHex !== null) {
    const a = o.anchor;
    if (a.tree_index !== o.proof.tree_index) {
      steps.push({ label: 'Anchored', ok: false, detail: `the latest anchor covers tree head #${a.tree_index}, not #${o.proof.tree_index}` });
    } else {
      const leaf = aggregateLeaf(a.tenantId, a.tree_size, computedHex, a.checkpoint_sha256);
      const leafOk = toHex(leaf) === a.aggregate_proof.leaf_hex.toLowerCase();
      steps.push({
        label: a.checkpoint_sha256 ? 'Aggregate leaf = tenant id ‖ tree size ‖ computed root ‖ signed checkpoint hash' : 'Aggregate leaf = tenant id ‖ tree size ‖ computed root',
        ok: leafOk,
        detail: toHex(leaf),
      });
      const aggRoot = await rootFromInclusionProof(await leafHash(leaf), a.aggregate_proof.leaf_index, a.aggregate_proof.tree_size, a.aggregate_proof.proof.map(unhex)).catch(() => null);
      const aggOk = !!aggRoot && toHex(aggRoot) === a.merkle_root.toLowerCase();
      steps.push({ label: 'Aggregate path folds to the anchored root', ok: aggOk, detail: aggRoot ? `${toHex(aggRoot)} vs anchored ${a.merkle_root}` : 'the aggregate proof does not fold' });
    }
  }
  return { ok: steps.every((s) => s.ok), steps, computedRoot: computedHex };
}
