/**
 * Tree heads and proofs as the API serves them. A proof needs O(log n) stored nodes, read in one query
 * (the upper levels come from memory: upper-node-cache.ts); every proof is verified with the RFC 9162
 * verifier before it is returned (`verified`).
 */
import { type Conn, ConflictError, InputError, NotFoundError, recordIdOf } from '@agw/shared';
import { type MerkleRepository, type TreeHead, nodeKey } from './merkle.repository';
import { UpperNodeCache } from './upper-node-cache';
import { type LeafRange, type NodeKey, consistencyRanges, hashLeaf, hashRange, inclusionRanges, nodesOfRanges, recordLeafBytes, verifyConsistency, verifyInclusion } from './rfc9162';

export interface InclusionProof {
  record_hash: string;
  /** the tenant's record id (leaf_index + 1), not the global row key */
  record_id: number;
  leaf_index: number;
  leaf_hash: string;
  tree: TreeHead;
  proof: string[];
  verified: boolean;
}

export interface ConsistencyProof {
  first: TreeHead;
  second: TreeHead;
  proof: string[];
  verified: boolean;
}

const HEX64 = /^[0-9a-fA-F]{64}$/;

export class MerkleProofs {
  constructor(
    private readonly repo: MerkleRepository,
    private readonly cache: UpperNodeCache = new UpperNodeCache(),
  ) {}

  listHeads(tenantId: string): Promise<TreeHead[]> {
    return this.repo.listHeads(tenantId);
  }

  latestHead(tenantId: string): Promise<TreeHead | undefined> {
    return this.repo.latestHead(tenantId);
  }

  /**
   * Inclusion of a record (by record_hash) in the latest tree head, which includes it when any head
   * does, or in tree head `treeIndex` (e.g. the one that was anchored).
   */
  async inclusion(tenantId: string, recordHashInput: string, treeIndex?: number): Promise<InclusionProof> {
    if (treeIndex !== undefined && (!Number.isSafeInteger(treeIndex) || treeIndex < 0)) {
      throw InputError.at(['query', 'tree_index'], 'tree_index must be a non-negative integer', 'int_parsing');
    }
    if (!HEX64.test(recordHashInput)) throw InputError.at(['path', 'record_hash'], 'record_hash must be 64 hexadecimal characters (SHA-256)', 'pattern');
    const recordHash = recordHashInput.toLowerCase();
    // the record and the tree head do not depend on each other: one statement reads both
    const { record, head } = await this.repo.recordAndHead(tenantId, recordHash, treeIndex);
    if (!record) throw new NotFoundError('No audit record with this record_hash');
    if (treeIndex !== undefined) {
      const chosen = head;
      if (!chosen) throw new NotFoundError(`Tree head ${treeIndex} not found`);
      if (chosen.tree_size <= record.tenant_seq) {
        throw new ConflictError(`Tree head ${treeIndex} covers ${chosen.tree_size} records and does not include this one (leaf ${record.tenant_seq}): use a later tree head`);
      }
      return this.inclusionAt(tenantId, record, chosen);
    }
    const tree = head;
    if (!tree || tree.tree_size <= record.tenant_seq) {
      throw new ConflictError(
        'The record is not in a Merkle tree yet: the hourly build (or POST /api/anchor/trigger) will include it',
        'The record is not in a Merkle tree yet: the hourly build (or POST /api/anchor/trigger) will include it',
      );
    }
    return this.inclusionAt(tenantId, record, tree);
  }

  /** Inclusion proof of leaf `record.tenant_seq` in `tree` (also used by the compliance export). */
  async inclusionAt(tenantId: string, record: { tenant_seq: number; record_hash: string }, tree: TreeHead): Promise<InclusionProof> {
    const ranges = inclusionRanges(record.tenant_seq, tree.tree_size);
    const leafKey: NodeKey = { level: 0, index: record.tenant_seq };
    const leafHash = hashLeaf(recordLeafBytes(record.record_hash));
    return this.fromNodes(
      tenantId,
      [leafKey, ...nodesOfRanges(ranges)],
      (nodes) => {
        const proof = this.fold(ranges, nodes);
        const stored = nodes.get(nodeKey(leafKey));
        const verified = Boolean(stored?.equals(leafHash)) && verifyInclusion(leafHash, record.tenant_seq, tree.tree_size, proof, Buffer.from(tree.merkle_root, 'hex'));
        return {
          record_hash: record.record_hash,
          record_id: recordIdOf(record.tenant_seq),
          leaf_index: record.tenant_seq,
          leaf_hash: leafHash.toString('hex'),
          tree,
          proof: proof.map((p) => p.toString('hex')),
          verified,
        };
      },
      (p) => p.verified,
    );
  }

  /** RFC 9162 consistency proof: tree head `n` (earlier) is a prefix of tree head `m`. */
  async consistency(tenantId: string, n: number, m: number): Promise<ConsistencyProof> {
    const issues = [];
    if (!Number.isSafeInteger(n) || n < 0) issues.push({ loc: ['path', 'tree_n'], msg: 'tree_n must be a non-negative integer (a tree_index)', type: 'int_parsing' });
    if (!Number.isSafeInteger(m) || m < 0) issues.push({ loc: ['path', 'tree_m'], msg: 'tree_m must be a non-negative integer (a tree_index)', type: 'int_parsing' });
    if (issues.length) throw new InputError(issues);
    if (n > m) throw InputError.at(['path', 'tree_n'], 'tree_n must not be greater than tree_m (the earlier tree comes first)', 'value_error');
    const heads = await this.repo.headsByIndex(tenantId, [n, m]);
    const [first, second] = [heads.get(n), heads.get(m)];
    if (!first) throw new NotFoundError(`Tree head ${n} not found`);
    if (!second) throw new NotFoundError(`Tree head ${m} not found`);
    const ranges = consistencyRanges(first.tree_size, second.tree_size);
    return this.fromNodes(
      tenantId,
      nodesOfRanges(ranges),
      (nodes) => {
        const proof = this.fold(ranges, nodes);
        const verified = verifyConsistency(first.tree_size, second.tree_size, Buffer.from(first.merkle_root, 'hex'), Buffer.from(second.merkle_root, 'hex'), proof);
        return { first, second, proof: proof.map((p) => p.toString('hex')), verified };
      },
      (p) => p.verified,
    );
  }

  /** The RFC 9162 consistency proof between two sizes of the tenant's tree (for witnesses: add-checkpoint). */
  async consistencyProofBySize(tenantId: string, size1: number, size2: number): Promise<Buffer[]> {
    const ranges = consistencyRanges(size1, size2);
    return this.fromNodes(tenantId, nodesOfRanges(ranges), (nodes) => this.fold(ranges, nodes), () => true);
  }

  /**
   * Whether the tree of size `size1` with root `root1` (e.g. as a signed checkpoint states it) is a prefix
   * of the tree of size `size2` with root `root2`, by an RFC 9162 consistency proof from stored nodes.
   */
  async consistentBySize(tenantId: string, size1: number, root1Hex: string, size2: number, root2Hex: string, conn?: Conn): Promise<boolean> {
    if (!Number.isSafeInteger(size1) || !Number.isSafeInteger(size2) || size1 < 1 || size2 < size1) return false;
    if (size1 === size2) return root1Hex === root2Hex;
    const ranges = consistencyRanges(size1, size2);
    try {
      return await this.fromNodes(
        tenantId,
        nodesOfRanges(ranges),
        (nodes) => verifyConsistency(size1, size2, Buffer.from(root1Hex, 'hex'), Buffer.from(root2Hex, 'hex'), this.fold(ranges, nodes)),
        (consistent) => consistent,
        conn,
      );
    } catch {
      return false; // a node the proof needs is missing
    }
  }

  /**
   * `make` from the stored nodes `keys`: the upper levels from the cache, the rest in one query. When what
   * `make` gives with cached nodes does not hold (`holds`) or cannot be made, the tenant's cached nodes are
   * dropped and it is made again from the table alone, whose answer stands (a failed verification is
   * then the table's, and is reported as such). `conn`: a caller's transaction reads through its own
   * connection, never a second one from the pool (checkpoints.ts holds a transaction while it checks).
   */
  private async fromNodes<T>(tenantId: string, keys: NodeKey[], make: (nodes: Map<string, Buffer>) => T, holds: (result: T) => boolean, conn?: Conn): Promise<T> {
    const { found, missing } = this.cache.lookup(tenantId, keys);
    const read = await this.repo.nodes(tenantId, missing, conn);
    this.cache.remember(tenantId, missing, read);
    if (found.size === 0) return make(read);
    for (const [k, hash] of read) found.set(k, hash);
    try {
      const result = make(found);
      if (holds(result)) return result;
    } catch {
      // a node is missing: the table's answer below says so
    }
    this.cache.forget(tenantId);
    return make(await this.repo.nodes(tenantId, keys, conn));
  }

  private fold(ranges: LeafRange[], nodes: Map<string, Buffer>): Buffer[] {
    return ranges.map((r) =>
      hashRange(r, (k) => {
        const h = nodes.get(nodeKey(k));
        if (!h) throw new Error(`Merkle node ${nodeKey(k)} is missing`);
        return h;
      }),
    );
  }
}
