/** GET/PATCH (and POST, as one guide uses) /api/dashboard/settings. */
import { Router } from 'express';
import { z } from 'zod';
import type { TenantsFeature } from '../../features/tenants.feature';
import { addPaths, jsonBody } from '../../openapi/openapi';
import { errors, reply, response } from '../../openapi/schema';
import { settingsPatchSchema, settingsViewSchema } from '../../tenants/settings.schema';
import { type AuthContext, authOf } from '../request-context';
import { deciderOf, isHumanSession } from './approvals.routes';
import { parseWith } from '../validation';
import { POLICY_SETTINGS_KEYS } from '../permissions';
import { ForbiddenError } from '@agw/shared';

const settingsResponse = settingsViewSchema.extend({ tenant_id: z.string(), api_key_prefix: z.string().optional() }).meta({ id: 'TenantSettings' });
const updatedResponse = settingsViewSchema.extend({
  tenant_id: z.string(),
  webhook_secret: z.string().optional().meta({ description: 'only in the answer that saved webhook settings (generated when a URL is set without one)' }),
});

/** How a refusal names a caller that is not a signed-in human. */
export function callerOf(a: AuthContext): string {
  if (a.method === 'oauth') return "an MCP client's OAuth token";
  if (a.method === 'mcp_session') return "a managed session's token";
  if (a.method === 'jwt') return a.viaApiKey ? 'a session token made from an API key' : 'this session token';
  return a.keyScope === 'agent' ? 'an agent-scoped API key' : 'an API key';
}

export function settingsRoutes(d: Pick<TenantsFeature, 'settings' | 'apiKeys'>): Router {
  const r = Router();
  r.get('/dashboard/settings', async (req, res) => {
    const { tenantId } = authOf(req);
    reply(res, settingsResponse, { tenant_id: tenantId, api_key_prefix: await d.apiKeys.activePrefix(tenantId), ...(await d.settings.view(tenantId)) });
  });
  const update = async (req: import('express').Request, res: import('express').Response) => {
    const auth = authOf(req);
    const patch = parseWith(settingsPatchSchema, req.body, 'body');
    // a policy_author changes the policy only (docs/auth.md, "Roles")
    if (auth.method === 'jwt' && !auth.viaApiKey && auth.role === 'policy_author') {
      const other = Object.keys(patch).filter((k) => !POLICY_SETTINGS_KEYS.has(k));
      if (other.length) throw new ForbiddenError(`Your role (policy_author) may change the policy settings only (${[...POLICY_SETTINGS_KEYS].join(', ')}), not ${other.join(', ')}: that needs the role owner or admin (docs/auth.md, "Roles")`);
    }
    reply(res, updatedResponse, { tenant_id: auth.tenantId, ...(await d.settings.update(auth.tenantId, patch, { human: isHumanSession(auth), caller: callerOf(auth), actor: deciderOf(auth) })) });
  };
  r.patch('/dashboard/settings', update);
  r.post('/dashboard/settings', update);
  return r;
}

const patchOp = (summary: string) => ({
  summary,
  requestBody: jsonBody(settingsPatchSchema),
  responses: {
    200: response('the updated settings', updatedResponse),
    403: errors[403]('approvals_require_human: false or oauth_grants_end_on_key_rotation: false (turning either off) needs a signed-in human, and so does lowering required_approvers; an API key or a session made from one cannot'),
    409: errors[409]('public_dashboard.slug taken by another tenant'),
    422: errors[422]('invalid key or value (a custom policy that does not compile names its line)'),
  },
});
addPaths({
  '/dashboard/settings': {
    get: { summary: 'The tenant’s settings (secrets never included)', responses: { 200: response('settings', settingsResponse) } },
    patch: patchOp('Change any settings keys'),
    post: patchOp('Same as PATCH (one guide uses POST)'),
  },
});
