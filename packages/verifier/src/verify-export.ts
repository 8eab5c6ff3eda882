/**
 * The checks of a compliance export, each one line: record hashes (RFC 8785 bytes, docs/audit.md), chain
 * links, record ids, signed checkpoints, consistency between successive tree heads, sample inclusion proofs
 * up to a signed head, anchor references up to the aggregate root, and (optional) the anchored root on chain.
 * Every check stops at its first failure and names it.
 */
import { hash } from 'node:crypto';
import canonicalizeImpl from 'canonicalize';
import type { ComplianceExport } from './export-format';
import { type CheckpointBody, type VerifierKey, openNote, parseCheckpoint } from './signed-note';
import { leafHash, verifyConsistency, verifyInclusion } from './rfc9162';

export interface CheckResult {
  name: string;
  ok: boolean;
  detail: string;
}

/**
 * The keys every record hashes, null or not (docs/audit.md, "Exactly what is hashed"); everything else in an
 * exported record is not hashed, but for `HASHED_WHEN_SET_KEYS`.
 */
export const HASHED_KEYS = [
  'action_id', 'agent_id', 'agent_type', 'agent_version', 'tool', 'method', 'params', 'decision', 'violations', 'severity',
  'alert_tier', 'requires_human', 'execution_mode', 'source', 'session_id', 'bundle_revision', 'details', 'requested_at',
] as const;

/**
 * The keys added to the record after chains were written (none yet; docs/audit.md, "Adding a hashed field"):
 * hashed only when not null, so a record written before one existed hashes as it was written.
 */
export const HASHED_WHEN_SET_KEYS: readonly string[] = [];

const canonicalize = canonicalizeImpl as unknown as (v: unknown) => string | undefined;

/** The hashed keys `recomputeRecordHash` uses: the verifier's own lists, or others in a test of a record with a key added. */
export interface HashedKeys {
  always: readonly string[];
  whenSet: readonly string[];
}

export function recomputeRecordHash(record: Record<string, unknown>, keys: HashedKeys = { always: HASHED_KEYS, whenSet: HASHED_WHEN_SET_KEYS }): string {
  const content: Record<string, unknown> = {};
  for (const k of keys.always) content[k] = record[k] === undefined ? null : record[k];
  for (const k of keys.whenSet) if (record[k] !== undefined && record[k] !== null) content[k] = record[k];
  const text = canonicalize(content);
  if (text === undefined) throw new Error('record has no JSON representation');
  return hash('sha256', Buffer.concat([Buffer.from(text, 'utf8'), Buffer.from(String(record.prev_hash), 'utf8')]), 'hex');
}

/**
 * Whether the export's record ids are the tenant's own (format 1.2 on): a record's id is its leaf index + 1.
 * Before 1.2 they were the fleet's global row keys, which say nothing about the record's place in the chain.
 * An id is not hashed or signed: this check only ties what a reader sees ("record 5") to the leaf it names.
 */
export function hasTenantRecordIds(formatVersion: string): boolean {
  const m = /^(\d+)\.(\d+)/.exec(String(formatVersion));
  return Boolean(m) && (Number(m![1]) > 1 || (Number(m![1]) === 1 && Number(m![2]) >= 2));
}

const hex = (h: string) => Buffer.from(h, 'hex');
const isHex64 = (s: unknown): s is string => typeof s === 'string' && /^[0-9a-f]{64}$/.test(s);

export interface OnChainReader {
  /** The contract's record of an aggregate root: timestamp 0 when it was never anchored. */
  anchorOf(contract: string, rootHex: string): Promise<{ timestamp: number; leafCount: number }>;
  chainId(): Promise<number>;
  /** The roots the RootAnchored events of a transaction carry (from `contract` only); undefined: no such transaction. */
  rootsOfTransaction?(contract: string, txHash: string): Promise<string[] | undefined>;
}

/**
 * Checks `doc`, an export of any format version (1.0 on; fields a version lacks are optional in
 * `ComplianceExport`), against the tenant's trusted verifier key, and with `o.chain` its anchors on chain.
 */
export async function verifyExport(doc: ComplianceExport, key: VerifierKey, o: { chain?: OnChainReader } = {}): Promise<CheckResult[]> {
  const out: CheckResult[] = [];
  const check = (name: string, fn: () => string) => {
    try {
      out.push({ name, ok: true, detail: fn() });
    } catch (e) {
      out.push({ name, ok: false, detail: e instanceof Error ? e.message : String(e) });
    }
  };

  if (!doc || !Array.isArray(doc.audit_records) || !doc.package) {
    return [{ name: 'export', ok: false, detail: 'not a compliance export (package, audit_records missing)' }];
  }
  const ev = doc.evidence;
  const records = [...doc.audit_records].sort((a, b) => a.leaf_index - b.leaf_index);

  check('verifier key', () => {
    if (ev?.verifier_key && ev.verifier_key.trim() !== `${key.name}+${key.keyId.toString('hex')}+${Buffer.concat([Buffer.from([1]), key.publicKey]).toString('base64')}`) {
      throw new Error(`the export names another verifier key (${ev.verifier_key.split('+')[0]}) than the trusted one (${key.name})`);
    }
    if (!key.name.endsWith(`/agw/${doc.package.tenant_id}`)) throw new Error(`the trusted key ${key.name} is not the key of tenant ${doc.package.tenant_id}'s log`);
    return `${key.name} (key id ${key.keyId.toString('hex')})`;
  });

  check('record hashes', () => {
    for (const r of records) {
      const h = recomputeRecordHash(r);
      if (h !== r.record_hash) throw new Error(`record ${r.id} (leaf ${r.leaf_index}): the hash of its canonical bytes is ${h}, the export says ${r.record_hash}`);
    }
    return `${records.length} records recomputed from their RFC 8785 bytes`;
  });

  check('chain links', () => {
    for (let i = 0; i < records.length; i++) {
      const r = records[i];
      if (r.leaf_index === 0 && r.prev_hash !== 'GENESIS') throw new Error(`record ${r.id} is leaf 0 but its prev_hash is not GENESIS`);
      if (i === 0) continue;
      const p = records[i - 1];
      if (r.leaf_index !== p.leaf_index + 1) throw new Error(`record at leaf ${p.leaf_index + 1} is missing (leaf ${p.leaf_index} is followed by leaf ${r.leaf_index})`);
      if (r.prev_hash !== p.record_hash) throw new Error(`record ${r.id} (leaf ${r.leaf_index}): prev_hash is not the record_hash of leaf ${p.leaf_index}`);
    }
    return `${Math.max(records.length - 1, 0)} links, leaves ${records[0]?.leaf_index ?? '-'}..${records[records.length - 1]?.leaf_index ?? '-'}`;
  });

  check('record ids', () => {
    const version = doc.package.format_version;
    if (!hasTenantRecordIds(version)) return `format ${version}: record ids are global row keys, not tied to leaves (per-tenant ids from format 1.2)`;
    for (const r of records) {
      if (r.id !== r.leaf_index + 1) throw new Error(`record ${r.id} is leaf ${r.leaf_index}: its id must be ${r.leaf_index + 1} (leaf index + 1)`);
    }
    for (const s of doc.sample_inclusion_proofs) {
      if (s.record_id !== s.leaf_index + 1) throw new Error(`sample of record ${s.record_id} is leaf ${s.leaf_index}: its record_id must be ${s.leaf_index + 1} (leaf index + 1)`);
    }
    return `${records.length} records and ${doc.sample_inclusion_proofs.length} samples: id = leaf index + 1 (the tenant's own numbering)`;
  });

  // signed checkpoints: every one verifies, states its own size and root, and matches the tree head of that size
  const signed = new Map<number, CheckpointBody>();
  check('checkpoint signatures', () => {
    if (!ev || ev.checkpoints.length === 0) throw new Error('the export has no signed checkpoint (evidence.checkpoints)');
    for (const c of ev.checkpoints) {
      let body: CheckpointBody;
      try {
        body = parseCheckpoint(openNote(c.note, key));
      } catch (e) {
        throw new Error(`checkpoint of tree size ${c.tree_size}: ${e instanceof Error ? e.message : e}`);
      }
      if (body.origin !== key.name) throw new Error(`checkpoint of tree size ${c.tree_size}: origin ${body.origin} is not ${key.name}`);
      if (body.treeSize !== c.tree_size || body.rootHex !== c.merkle_root) {
        throw new Error(`checkpoint listed for tree size ${c.tree_size} signs size ${body.treeSize} with root ${body.rootHex.slice(0, 16)}…, not the listed head`);
      }
      const prior = signed.get(body.treeSize);
      if (prior && prior.rootHex !== body.rootHex) throw new Error(`two signed checkpoints of size ${body.treeSize} with different roots (a fork)`);
      signed.set(body.treeSize, body);
    }
    for (const h of ev.tree_heads) {
      const s = signed.get(h.tree_size);
      if (!s) throw new Error(`tree head ${h.tree_index} (size ${h.tree_size}) has no signed checkpoint`);
      if (s.rootHex !== h.merkle_root) throw new Error(`tree head ${h.tree_index} (size ${h.tree_size}) has another root than its signed checkpoint`);
    }
    return `${ev.checkpoints.length} checkpoints signed by ${key.name}`;
  });

  check('consistency', () => {
    if (!ev) throw new Error('the export has no evidence section');
    const heads = [...ev.tree_heads].sort((a, b) => a.tree_size - b.tree_size);
    for (let i = 1; i < heads.length; i++) {
      const a = heads[i - 1];
      const b = heads[i];
      const p = ev.consistency_proofs.find((x) => x.from_size === a.tree_size && x.to_size === b.tree_size);
      if (!p) throw new Error(`no consistency proof from size ${a.tree_size} to ${b.tree_size}`);
      if (!verifyConsistency(a.tree_size, b.tree_size, hex(a.merkle_root), hex(b.merkle_root), p.proof.map(hex))) {
        throw new Error(`the tree of size ${a.tree_size} is not a prefix of the tree of size ${b.tree_size} (consistency proof fails)`);
      }
    }
    return `${Math.max(heads.length - 1, 0)} proofs between ${heads.length} successive tree heads`;
  });

  check('inclusion proofs', () => {
    const byLeaf = new Map(records.map((r) => [r.leaf_index, r]));
    for (const s of doc.sample_inclusion_proofs) {
      const rec = byLeaf.get(s.leaf_index);
      if (rec && rec.record_hash !== s.record_hash) throw new Error(`sample of leaf ${s.leaf_index}: record_hash differs from the exported record`);
      if (!isHex64(s.record_hash) || !verifyInclusion(leafHash(hex(s.record_hash)), s.leaf_index, s.tree_size, s.proof.map(hex), hex(s.merkle_root))) {
        throw new Error(`sample of record ${s.record_id} (leaf ${s.leaf_index}): the inclusion proof does not reach root ${s.merkle_root.slice(0, 16)}… of size ${s.tree_size}`);
      }
      const c = signed.get(s.tree_size);
      if (!c || c.rootHex !== s.merkle_root) throw new Error(`sample of record ${s.record_id}: its tree head (size ${s.tree_size}) has no signed checkpoint with that root`);
    }
    return `${doc.sample_inclusion_proofs.length} proofs up to signed tree heads`;
  });

  const anchors = doc.anchors?.references ?? [];
  const notes = new Map((ev?.checkpoints ?? []).map((c) => [c.tree_size, c.note]));
  check('anchor proofs', () => {
    let bound = 0;
    for (const a of anchors) {
      const size = Buffer.alloc(8);
      size.writeBigUInt64BE(BigInt(a.tree_size));
      // the leaf covers the signed checkpoint's SHA-256 when the head had one when it was anchored (88 bytes)
      const cp = a.checkpoint_sha256 ?? null;
      if (cp !== null && !isHex64(cp)) throw new Error(`anchor of tree size ${a.tree_size}: checkpoint_sha256 is not 64 hex characters`);
      const leaf = Buffer.concat([hex(doc.package.tenant_id.replace(/-/g, '')), size, hex(a.tenant_root), ...(cp ? [hex(cp)] : [])]);
      if (!verifyInclusion(leafHash(leaf), a.leaf_index, a.leaf_count, a.aggregate_proof.map(hex), hex(a.aggregate_root))) {
        throw new Error(`anchor of tree size ${a.tree_size}: the aggregate proof does not reach ${a.aggregate_root.slice(0, 16)}…`);
      }
      const c = signed.get(a.tree_size);
      if (!c || c.rootHex !== a.tenant_root) throw new Error(`anchor of tree size ${a.tree_size}: the anchored tenant root is not the signed checkpoint's`);
      if (cp) {
        const note = notes.get(a.tree_size) ?? '';
        if (hash('sha256', note, 'hex') !== cp) {
          throw new Error(`anchor of tree size ${a.tree_size}: the anchored checkpoint hash ${cp.slice(0, 16)}… is not the SHA-256 of the export's signed checkpoint of that size`);
        }
        bound++;
      }
    }
    return anchors.length
      ? `${anchors.length} anchored heads = signed checkpoints, aggregate proofs verify; ${bound} of them anchor the signed checkpoint note itself`
      : 'no anchor references in the export';
  });

  if (o.chain) {
    const name = 'on-chain root';
    try {
      const id = await o.chain.chainId();
      const expected = ev?.chain.chain_id ?? anchors[0]?.chain_id;
      if (expected !== undefined && expected !== null && id !== expected) throw new Error(`the RPC node is chain ${id}, the export anchors on chain ${expected}`);
      let txs = 0;
      for (const a of anchors) {
        const r = await o.chain.anchorOf(a.contract_address, a.aggregate_root);
        if (r.timestamp === 0) throw new Error(`the contract ${a.contract_address} has no anchor of root ${a.aggregate_root} (tree size ${a.tree_size})`);
        if (r.leafCount !== a.leaf_count) throw new Error(`the contract anchored root ${a.aggregate_root.slice(0, 16)}… with ${r.leafCount} leaves, the export says ${a.leaf_count}`);
        if (o.chain.rootsOfTransaction && a.tx_hash) {
          // the anchor transaction the export names is the one that wrote this root (its RootAnchored event)
          const roots = await o.chain.rootsOfTransaction(a.contract_address, a.tx_hash);
          if (!roots) throw new Error(`the anchor transaction ${a.tx_hash} of tree size ${a.tree_size} is not on chain ${id}`);
          if (!roots.includes(a.aggregate_root)) throw new Error(`the anchor transaction ${a.tx_hash} of tree size ${a.tree_size} did not anchor root ${a.aggregate_root.slice(0, 16)}…`);
          txs++;
        }
      }
      out.push({ name, ok: true, detail: `${anchors.length} aggregate roots found in contract on chain ${id}${txs ? `, written by the ${txs} anchor transactions the export names` : ''}` });
    } catch (e) {
      out.push({ name, ok: false, detail: e instanceof Error ? e.message : String(e) });
    }
  }
  return out;
}
