/** gRPC adapter of the Merkle side and the audit part of the compliance export: translate messages, call the domain. */
import { merkle as pb } from '@agw/proto';
import { type GrpcServiceBinding, InputError, type Logger, implement } from '@agw/shared';
import type { ComplianceEvidence } from '../export/compliance-evidence';
import type { MerkleProofs } from '../merkle/merkle-proofs';
import type { MerkleRepository, TreeHead } from '../merkle/merkle.repository';
import type { MerkleScheduler } from '../merkle/merkle.scheduler';
import type { TreeBuilder } from '../merkle/tree-builder';
import type { StoredCheckpoint } from '../checkpoints/checkpoint.repository';
import type { Checkpoints } from '../checkpoints/checkpoints';
import { type CosignatureRepository, type CosignatureRow, cosignedNote } from '../checkpoints/witnessing';

export function toCheckpoint(c: StoredCheckpoint, cosignatures: CosignatureRow[] = []): pb.Checkpoint {
  return {
    cosignedNote: cosignedNote(c.note, cosignatures),
    cosignatures: cosignatures.map((x) => ({ witness: x.witness, cosignedAt: x.cosigned_at })),
    origin: c.origin,
    treeSize: c.tree_size,
    treeIndex: c.tree_index,
    merkleRoot: c.merkle_root,
    note: c.note,
    keyName: c.key_name,
    checkpointSha256: c.checkpoint_sha256,
    signedAt: c.signed_at,
  };
}

export function toTreeHead(h: TreeHead): pb.TreeHead {
  return {
    tenantId: h.tenant_id,
    treeIndex: h.tree_index,
    treeSize: h.tree_size,
    merkleRoot: h.merkle_root,
    recordsAdded: h.records_added,
    fromRecordId: h.from_record_id ?? 0,
    toRecordId: h.to_record_id ?? 0,
    periodStart: h.period_start,
    periodEnd: h.period_end,
    builtBy: h.built_by,
    builtAt: h.built_at,
  };
}

const required = (tenantId: string) => {
  if (!tenantId) throw InputError.at(['tenant_id'], 'tenant_id is required', 'missing');
  return tenantId;
};

export function merkleGrpcService(
  d: { builder: TreeBuilder; proofs: MerkleProofs; repo: MerkleRepository; scheduler?: MerkleScheduler; schedule: string; checkpoints: Checkpoints; cosignatures?: CosignatureRepository; verifierKey: (tenantId: string) => Promise<Omit<pb.VerifierKey, never>> },
  logger: Logger,
): GrpcServiceBinding {
  return {
    definition: pb.MerkleServiceService,
    implementation: implement(
      pb.MerkleServiceService,
      {
        buildPending: async (req) => {
          const r = await d.builder.buildPending({ tenantId: req.tenantId || undefined, builtBy: req.builtBy === 'schedule' ? 'schedule' : 'trigger', wait: true });
          const latest = req.tenantId ? await d.proofs.latestHead(req.tenantId) : undefined;
          return { built: r.built.map(toTreeHead), latest: latest ? toTreeHead(latest) : undefined };
        },
        listTreeHeads: async (req) => ({ trees: (await d.proofs.listHeads(required(req.tenantId))).map(toTreeHead) }),
        inclusionProof: async (req) => {
          const p = await d.proofs.inclusion(required(req.tenantId), req.recordHash, req.treeIndex);
          return { recordHash: p.record_hash, recordId: p.record_id, leafIndex: p.leaf_index, leafHash: p.leaf_hash, tree: toTreeHead(p.tree), proof: p.proof, verified: p.verified };
        },
        consistencyProof: async (req) => {
          const p = await d.proofs.consistency(required(req.tenantId), req.treeN, req.treeM);
          return { first: toTreeHead(p.first), second: toTreeHead(p.second), proof: p.proof, verified: p.verified };
        },
        getCheckpoint: async (req) => {
          const tenantId = required(req.tenantId);
          const c = req.treeSize === undefined ? await d.checkpoints.latest(tenantId) : await d.checkpoints.atSize(tenantId, Number(req.treeSize));
          const cosigs = (await d.cosignatures?.ofSizes(tenantId, [c.tree_size]))?.get(c.tree_size);
          return toCheckpoint(c, cosigs);
        },
        getVerifierKey: async (req) => d.verifierKey(required(req.tenantId)),
        listCheckpoints: async (req) => {
          const tenantId = required(req.tenantId);
          const list = await d.checkpoints.list(tenantId);
          const cosigs = await d.cosignatures?.ofSizes(tenantId, list.map((c) => c.tree_size));
          return { checkpoints: list.map((c) => toCheckpoint(c, cosigs?.get(c.tree_size))) };
        },
        health: async () => {
          const s = await d.repo.statsAcrossTenants();
          const lastRun = d.scheduler?.lastRunAt ? `; this replica last checked at ${d.scheduler.lastRunAt.toISOString()}` : '';
          return { status: 'ok', treeHeads: s.tree_heads, tenants: s.tenants, lastBuildAt: s.last_build_at ?? '', pendingRecords: s.pending_records, schedule: `${d.schedule}${lastRun}` };
        },
      },
      logger,
    ),
  };
}

export function complianceGrpcService(evidence: ComplianceEvidence, logger: Logger): GrpcServiceBinding {
  return {
    definition: pb.ComplianceServiceService,
    implementation: implement(
      pb.ComplianceServiceService,
      {
        getEvidence: async (req) => {
          const out = await evidence.evidence(required(req.tenantId), { from: req.from || undefined, to: req.to || undefined, inputs: req.format === 'opa' });
          return { packageJson: out.packageJson, decisionInputsJson: out.decisionInputsJson };
        },
      },
      logger,
    ),
  };
}
