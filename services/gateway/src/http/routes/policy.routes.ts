/** Policy endpoints (issue: policy service): templates, rules, bundle status, replay, agent behavior. */
import { Router } from 'express';
import type { GatewayDeps } from '../../deps';

export function policyRoutes(_d: GatewayDeps): Router {
  return Router();
}
