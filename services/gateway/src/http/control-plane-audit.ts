/**
 * The control-plane changes that are recorded with the member who made them (tenants/control-plane-records.ts):
 * settings and policy, API keys, members and invitations, OAuth consents. Applied after authentication and
 * the role guard: a successful answer (2xx) of one of these operations is held until its record is
 * appended; a record that cannot be appended is logged (the change itself is committed by then and is
 * answered as such).
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Logger } from '@agw/shared';
import type { ControlPlaneChange, ControlPlaneRecords } from '../tenants/control-plane-records';
import { authOf } from './request-context';

const POLICY_KEYS = ['policy_template', 'policy_config', 'custom_policy', 'gateway_constraints'];

/** The recorded operations: method + path pattern -> what the record says (names and ids only, never values). */
const OPERATIONS: Array<{ method: string; path: RegExp; change: (req: Request, m: RegExpMatchArray) => ControlPlaneChange }> = [
  {
    method: 'PATCH|POST',
    path: /^\/dashboard\/settings$/,
    change: (req) => {
      const keys = Object.keys(req.body && typeof req.body === 'object' ? req.body : {}).sort();
      return { tool: keys.some((k) => POLICY_KEYS.includes(k)) ? 'policy' : 'settings', method: 'update', details: { change: 'settings', keys } };
    },
  },
  { method: 'POST', path: /^\/api-keys$/, change: () => ({ tool: 'api_keys', method: 'issue', details: { change: 'api_key_issued', scope: 'agent' } }) },
  { method: 'POST', path: /^\/api-keys\/rotate$/, change: () => ({ tool: 'api_keys', method: 'rotate', details: { change: 'tenant_key_rotated' } }) },
  { method: 'DELETE', path: /^\/api-keys\/([^/]+)$/, change: (_r, m) => ({ tool: 'api_keys', method: 'revoke', details: { change: 'api_key_revoked', key_id: m[1] } }) },
  {
    method: 'POST',
    path: /^\/members\/invitations$/,
    change: (req) => ({ tool: 'members', method: 'invite', details: { change: 'member_invited', role: typeof req.body?.role === 'string' ? req.body.role : null } }),
  },
  { method: 'DELETE', path: /^\/members\/invitations\/([^/]+)$/, change: (_r, m) => ({ tool: 'members', method: 'withdraw_invitation', details: { change: 'invitation_withdrawn', invitation_id: m[1] } }) },
  {
    method: 'PATCH',
    path: /^\/members\/([^/]+)$/,
    change: (req, m) => ({ tool: 'members', method: 'change_role', details: { change: 'member_role_changed', target_member_id: m[1], role: typeof req.body?.role === 'string' ? req.body.role : null } }),
  },
  { method: 'DELETE', path: /^\/members\/([^/]+)$/, change: (_r, m) => ({ tool: 'members', method: 'remove', details: { change: 'member_removed', target_member_id: m[1] } }) },
  {
    method: 'POST',
    path: /^\/oauth\/requests\/([^/]+)\/decision$/,
    change: (req, m) => ({ tool: 'oauth_consent', method: 'decide', details: { change: req.body?.approve === true ? 'oauth_consent_granted' : 'oauth_consent_denied', request_id: m[1] } }),
  },
  { method: 'DELETE', path: /^\/oauth\/grants\/([^/]+)$/, change: (_r, m) => ({ tool: 'oauth_consent', method: 'revoke', details: { change: 'oauth_grant_revoked', grant_id: m[1] } }) },
];

export function controlPlaneAudit(records: ControlPlaneRecords | undefined, logger: Logger): RequestHandler {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (!records || !req.auth) return next();
    let change: ControlPlaneChange | undefined;
    for (const op of OPERATIONS) {
      const m = op.method.split('|').includes(req.method) ? req.path.match(op.path) : null;
      if (m) {
        change = op.change(req, m);
        break;
      }
    }
    if (!change) return next();
    const recorded = change;
    const json = res.json.bind(res);
    res.json = (body: unknown) => {
      if (res.statusCode >= 300) return json(body);
      const auth = authOf(req);
      records
        .record(auth.tenantId, auth, recorded)
        .catch((err: unknown) => logger.error({ err, tenantId: auth.tenantId, change: recorded.details.change }, 'could not record a control-plane change'))
        .finally(() => json(body));
      return res;
    };
    next();
  };
}
