/** gRPC adapter of the Merkle side and the audit part of the compliance export: translate messages, call the domain. */
import { merkle as pb } from '@agw/proto';
import { type GrpcServiceBinding, type Logger, bindService, requiredField } from '@agw/shared';
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
    cosigned_note: cosignedNote(c.note, cosignatures),
    cosignatures: cosignatures.map((x) => ({ witness: x.witness, cosigned_at: x.cosigned_at })),
    origin: c.origin,
    tree_size: c.tree_size,
    tree_index: c.tree_index,
    merkle_root: c.merkle_root,
    note: c.note,
    key_name: c.key_name,
    checkpoint_sha256: c.checkpoint_sha256,
    signed_at: c.signed_at,
  };
}

export function toTreeHead(h: TreeHead): pb.TreeHead {
  return {
    tenant_id: h.tenant_id,
    tree_index: h.tree_index,
    tree_size: h.tree_size,
    merkle_root: h.merkle_root,
    records_added: h.records_added,
    from_record_id: h.from_record_id ?? 0,
    to_record_id: h.to_record_id ?? 0,
    period_start: h.period_start,
    period_end: h.period_end,
    built_by: h.built_by,
    built_at: h.built_at,
  };
}

const tenant = (tenantId: string) => requiredField(tenantId, 'tenant_id');

export function merkleGrpcService(
  d: { builder: TreeBuilder; proofs: MerkleProofs; repo: MerkleRepository; scheduler?: MerkleScheduler; schedule: string; checkpoints: Checkpoints; cosignatures?: CosignatureRepository; verifierKey: (tenantId: string) => Promise<Omit<pb.VerifierKey, never>> },
  logger: Logger,
): GrpcServiceBinding {
  return bindService(
    pb.MerkleServiceService,
    {
      buildPending: async (req) => {
        const r = await d.builder.buildPending({ tenantId: req.tenant_id || undefined, builtBy: req.built_by === 'schedule' ? 'schedule' : 'trigger', wait: true });
        const latest = req.tenant_id ? await d.proofs.latestHead(req.tenant_id) : undefined;
        return { built: r.built.map(toTreeHead), latest: latest ? toTreeHead(latest) : undefined };
      },
      listTreeHeads: async (req) => ({ trees: (await d.proofs.listHeads(tenant(req.tenant_id))).map(toTreeHead) }),
      inclusionProof: async (req) => {
        const p = await d.proofs.inclusion(tenant(req.tenant_id), req.record_hash, req.tree_index);
        return { record_hash: p.record_hash, record_id: p.record_id, leaf_index: p.leaf_index, leaf_hash: p.leaf_hash, tree: toTreeHead(p.tree), proof: p.proof, verified: p.verified };
      },
      consistencyProof: async (req) => {
        const p = await d.proofs.consistency(tenant(req.tenant_id), req.tree_n, req.tree_m);
        return { first: toTreeHead(p.first), second: toTreeHead(p.second), proof: p.proof, verified: p.verified };
      },
      getCheckpoint: async (req) => {
        const tenantId = tenant(req.tenant_id);
        const c = req.tree_size === undefined ? await d.checkpoints.latest(tenantId) : await d.checkpoints.atSize(tenantId, Number(req.tree_size));
        const cosigs = (await d.cosignatures?.ofSizes(tenantId, [c.tree_size]))?.get(c.tree_size);
        return toCheckpoint(c, cosigs);
      },
      getVerifierKey: async (req) => d.verifierKey(tenant(req.tenant_id)),
      listCheckpoints: async (req) => {
        const tenantId = tenant(req.tenant_id);
        const list = await d.checkpoints.list(tenantId);
        const cosigs = await d.cosignatures?.ofSizes(tenantId, list.map((c) => c.tree_size));
        return { checkpoints: list.map((c) => toCheckpoint(c, cosigs?.get(c.tree_size))) };
      },
      health: async () => {
        const s = await d.repo.statsAcrossTenants();
        const lastRun = d.scheduler?.lastRunAt ? `; this replica last checked at ${d.scheduler.lastRunAt.toISOString()}` : '';
        return { status: 'ok', tree_heads: s.tree_heads, tenants: s.tenants, last_build_at: s.last_build_at ?? '', pending_records: s.pending_records, schedule: `${d.schedule}${lastRun}` };
      },
    },
    logger,
  );
}

export function complianceGrpcService(evidence: ComplianceEvidence, logger: Logger): GrpcServiceBinding {
  return bindService(
    pb.ComplianceServiceService,
    {
      getEvidence: async (req) => {
        const out = await evidence.evidence(tenant(req.tenant_id), { from: req.from || undefined, to: req.to || undefined, inputs: req.format === 'opa' });
        return { package_json: out.packageJson, decision_inputs_json: out.decisionInputsJson };
      },
    },
    logger,
  );
}
