/** gRPC adapter of the anchor service: translate messages, call the domain, nothing else. */
import { anchor as pb } from '@agw/proto';
import { type GrpcServiceBinding, InputError, type Logger, bindService, requiredField } from '@agw/shared';
import type { AnchorService, TenantAnchorView } from '../anchoring/anchor-service';

/** The view in the contract's names (the same as the view's but for tenant_root); fields the message lacks are not sent. */
export function toTenantAnchor(a: TenantAnchorView): pb.TenantAnchor {
  return { ...a, tenant_root: a.merkle_root, checkpoint_sha256: a.checkpoint_sha256 ?? '' };
}

const tenant = (id: string) => requiredField(id, 'tenant_id');

export function anchorGrpcService(service: AnchorService, logger: Logger): GrpcServiceBinding {
  return bindService(
    pb.AnchorServiceService,
    {
      trigger: async (req) => {
        req.heads.forEach((h, i) => {
          if (!/^[0-9a-f]{64}$/.test(h.merkle_root) || h.tree_size < 1 || h.tree_index < 0 || Number.isNaN(Date.parse(h.period_end)) || Number.isNaN(Date.parse(h.period_start))) {
            throw InputError.at(['heads', i], 'a tree head needs a 64-hex merkle_root, tree_size >= 1, tree_index >= 0 and ISO timestamps', 'value_error');
          }
        });
        const a = await service.trigger(
          tenant(req.tenant_id),
          req.heads.map((h) => ({ tree_index: h.tree_index, tree_size: h.tree_size, merkle_root: h.merkle_root, period_start: h.period_start, period_end: h.period_end })),
        );
        return { status: 'anchored', anchor: toTenantAnchor(a) };
      },
      status: async (req) => {
        const s = await service.status(tenant(req.tenant_id), req.requested_chain);
        return { ...s, last_anchor: s.last_anchor && toTenantAnchor(s.last_anchor) };
      },
      verify: async (req) => {
        const v = await service.verify(tenant(req.tenant_id));
        return { ...v, anchor: v.anchor && toTenantAnchor(v.anchor) };
      },
      listAnchors: async (req) => ({ anchors: (await service.list(tenant(req.tenant_id))).map(toTenantAnchor) }),
      health: () => service.health(), // the domain's answer is the message, field for field
    },
    logger,
  );
}
