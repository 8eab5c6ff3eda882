/** GET/PATCH (and POST, as one guide uses) /api/dashboard/settings. */
import { Router } from 'express';
import type { GatewayDeps } from '../../deps';
import { settingsPatchSchema } from '../../tenants/settings.schema';
import { authOf } from '../request-context';
import { parseWith } from '../validation';

export function settingsRoutes(d: GatewayDeps): Router {
  const r = Router();
  r.get('/dashboard/settings', async (req, res) => {
    const { tenantId } = authOf(req);
    res.json({ tenant_id: tenantId, api_key_prefix: await d.apiKeys.activePrefix(tenantId), ...(await d.settings.view(tenantId)) });
  });
  const update = async (req: import('express').Request, res: import('express').Response) => {
    const { tenantId } = authOf(req);
    const patch = parseWith(settingsPatchSchema, req.body, 'body');
    res.json({ tenant_id: tenantId, ...(await d.settings.update(tenantId, patch)) });
  };
  r.patch('/dashboard/settings', update);
  r.post('/dashboard/settings', update);
  return r;
}
