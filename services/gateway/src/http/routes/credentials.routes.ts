/** Credentials vault, HSM and PII erasure endpoints (issue: vault service). */
import { Router } from 'express';
import type { GatewayDeps } from '../../deps';

export function credentialRoutes(_d: GatewayDeps): Router {
  return Router();
}
