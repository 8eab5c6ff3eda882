/** Merkle tree heads and proofs, anchoring and compliance export (issue: provable audit). */
import { Router } from 'express';
import type { GatewayDeps } from '../../deps';

export function provenanceRoutes(_d: GatewayDeps): Router {
  return Router();
}
