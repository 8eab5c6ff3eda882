/** Webhook delivery log and test delivery (issue: webhook service). */
import { Router } from 'express';
import type { GatewayDeps } from '../../deps';

export function webhookRoutes(_d: GatewayDeps): Router {
  return Router();
}
