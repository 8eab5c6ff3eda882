/** Sign-up, log-in, sessions, e-mail verification and API key rotation. */
import { Router } from 'express';
import { z } from 'zod';
import { NotFoundError } from '@agw/shared';
import type { GatewayDeps } from '../../deps';
import { authOf } from '../request-context';
import { parseWith } from '../validation';

const signupBody = z
  .object({
    email: z.email('email must be a valid e-mail address').max(320),
    password: z.string().min(8, 'password must be at least 8 characters').max(1024),
    tenant_name: z.string().trim().min(1).max(256),
  })
  .strict();

const loginBody = z.object({ email: z.string().min(1).max(320), password: z.string().min(1).max(1024) }).strict();

/** Public: no authentication. */
export function publicAuthRoutes(d: GatewayDeps): Router {
  const r = Router();
  r.post('/auth/signup', async (req, res) => {
    res.status(201).json(await d.accounts.signup(parseWith(signupBody, req.body, 'body')));
  });
  r.post('/auth/login', async (req, res) => {
    res.json(await d.accounts.login(parseWith(loginBody, req.body, 'body')));
  });
  r.get('/auth/verify-email', async (req, res) => {
    const { token } = parseWith(z.object({ token: z.string().min(1).max(4096) }), { token: req.query.token }, 'query');
    res.json(await d.accounts.verifyEmail(token));
  });
  return r;
}

/** Authenticated. */
export function authRoutes(d: GatewayDeps): Router {
  const r = Router();
  r.post('/api-keys/rotate', async (req, res) => {
    const { tenantId } = authOf(req);
    const key = await d.apiKeys.rotate(tenantId);
    res.json({ api_key: key.key, key_prefix: key.keyPrefix, message: 'The previous key is invalid from now on, on every gateway replica.' });
  });
  r.post('/auth/session', async (req, res) => {
    const auth = authOf(req);
    if (auth.method === 'jwt' && auth.userId && auth.email) {
      res.json(await d.sessions.issue({ userId: auth.userId, tenantId: auth.tenantId, email: auth.email }));
      return;
    }
    // API-key callers get a token for the tenant's owner account
    const owner = await d.tenants.owner(auth.tenantId);
    if (!owner) throw new NotFoundError('The tenant has no user to open a session for');
    res.json(await d.sessions.issue({ userId: owner.id, tenantId: auth.tenantId, email: owner.email }));
  });
  r.get('/auth/me', async (req, res) => {
    const auth = authOf(req);
    const tenant = await d.tenants.getTenant(auth.tenantId);
    res.json({
      tenant_id: auth.tenantId,
      tenant_slug: tenant?.slug ?? null,
      tenant_name: tenant?.name ?? null,
      auth_method: auth.method,
      user_id: auth.userId ?? null,
      email: auth.email ?? null,
      is_admin: auth.isAdmin,
    });
  });
  return r;
}
