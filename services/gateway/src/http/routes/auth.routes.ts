/** Sign-up, log-in, sessions, e-mail verification and API key rotation. */
import { Router } from 'express';
import { z } from 'zod';
import { NotFoundError } from '@agw/shared';
import type { TenantsFeature } from '../../features/tenants.feature';
import { startConsoleSession } from './console-session.routes';
import { addPaths, jsonBody } from '../../openapi/openapi';
import { errors, reply, response } from '../../openapi/schema';
import { authOf } from '../request-context';
import { parseWith } from '../validation';
import { ROLES } from '../permissions';

const signupBody = z
  .object({
    email: z.email('email must be a valid e-mail address').max(320),
    password: z.string().min(8, 'password must be at least 8 characters').max(1024),
    tenant_name: z.string().trim().min(1).max(256),
  })
  .strict();

const loginBody = z.object({ email: z.string().min(1).max(320), password: z.string().min(1).max(1024) }).strict();
const verifyQuery = z.object({ token: z.string().min(1).max(4096) });

export const signupResponse = z.object({
  tenant_id: z.string(),
  slug: z.string(),
  user_id: z.string(),
  email: z.string(),
  api_key: z.string().meta({ description: 'shown only once' }),
  email_verification: z.literal('sent'),
  message: z.string(),
});
export const sessionTokenSchema = z
  .object({ access_token: z.string(), token_type: z.literal('bearer'), expires_in: z.number().int().meta({ description: 'seconds' }) })
  .meta({ id: 'SessionToken', description: 'A JWT session: send it as Authorization: Bearer <access_token>' });
const verifiedResponse = z.object({ verified: z.literal(true), email: z.string() });
const rotateResponse = z.object({ api_key: z.string(), key_prefix: z.string(), message: z.string() });
export const meResponse = z.object({
  tenant_id: z.string(),
  tenant_slug: z.string().nullable(),
  tenant_name: z.string().nullable(),
  auth_method: z.string().meta({ description: 'api_key or jwt' }),
  key_scope: z.enum(['tenant', 'agent']).optional().meta({ description: 'the scope of the API key used (docs/auth.md, "Scoped keys")' }),
  user_id: z.string().nullable(),
  email: z.string().nullable(),
  is_admin: z.boolean(),
  role: z.enum(ROLES).nullable().meta({ description: 'a signed-in member\'s role (docs/auth.md, "Roles"); the tenant API key acts as owner; null for agent keys and tokens' }),
});

/** Public: no authentication. */
export function publicAuthRoutes(d: Pick<TenantsFeature, 'accounts' | 'config' | 'consoleRefresh' | 'sessions' | 'tenants'>): Router {
  const r = Router();
  r.post('/auth/signup', async (req, res) => {
    reply(res, signupResponse, await d.accounts.signup(parseWith(signupBody, req.body, 'body')), 201);
  });
  r.post('/auth/login', async (req, res) => {
    const session = await d.accounts.login(parseWith(loginBody, req.body, 'body'));
    // the console keeps the access token in memory; the refresh cookie lets it survive a reload
    await startConsoleSession(d, res, session.access_token);
    reply(res, sessionTokenSchema, session);
  });
  r.get('/auth/verify-email', async (req, res) => {
    const { token } = parseWith(verifyQuery, { token: req.query.token }, 'query');
    reply(res, verifiedResponse, await d.accounts.verifyEmail(token));
  });
  return r;
}

/** Authenticated. */
export function authRoutes(d: Pick<TenantsFeature, 'accounts' | 'apiKeys' | 'config' | 'consoleRefresh' | 'oauth' | 'sessions' | 'settings' | 'tenants'>): Router {
  const r = Router();
  r.post('/api-keys/rotate', async (req, res) => {
    const { tenantId } = authOf(req);
    const key = await d.apiKeys.rotate(tenantId);
    // a rotated key ends every console session of the tenant too (docs/auth.md)
    await d.consoleRefresh.revokeTenant(tenantId);
    // and, unless the tenant chose otherwise, every OAuth grant of its MCP clients (docs/auth.md)
    if ((await d.settings.stored(tenantId)).oauth_grants_end_on_key_rotation !== false) await d.oauth.repo.revokeGrantsOf(tenantId, new Date());
    reply(res, rotateResponse, { api_key: key.key, key_prefix: key.keyPrefix, message: 'The previous key is invalid from now on, on every gateway replica.' });
  });
  r.post('/auth/session', async (req, res) => {
    const auth = authOf(req);
    if (auth.method === 'jwt' && auth.userId && auth.email) {
      reply(res, sessionTokenSchema, await d.sessions.issue({ userId: auth.userId, tenantId: auth.tenantId, email: auth.email, viaApiKey: auth.viaApiKey }));
      return;
    }
    // API-key callers get a token for the tenant's owner account, marked as made from a key: it is no
    // human log-in, so it cannot decide approvals where approvals_require_human is on (docs/auth.md)
    const owner = await d.tenants.owner(auth.tenantId);
    if (!owner) throw new NotFoundError('The tenant has no user to open a session for');
    reply(res, sessionTokenSchema, await d.sessions.issue({ userId: owner.id, tenantId: auth.tenantId, email: owner.email, viaApiKey: true }));
  });
  r.get('/auth/me', async (req, res) => {
    const auth = authOf(req);
    const tenant = await d.tenants.getTenant(auth.tenantId);
    reply(res, meResponse, {
      tenant_id: auth.tenantId,
      tenant_slug: tenant?.slug ?? null,
      tenant_name: tenant?.name ?? null,
      auth_method: auth.method,
      ...(auth.keyScope ? { key_scope: auth.keyScope } : {}),
      user_id: auth.userId ?? null,
      email: auth.email ?? null,
      is_admin: auth.isAdmin,
      role: auth.method === 'jwt' && !auth.viaApiKey ? (auth.role ?? null) : auth.method === 'jwt' || (auth.method === 'api_key' && auth.keyScope === 'tenant') ? 'owner' : null,
    });
  });
  return r;
}

addPaths({
  '/auth/signup': {
    post: {
      security: [],
      summary: 'Create a tenant and its owner; returns the API key once (per-IP rate limit)',
      requestBody: jsonBody(signupBody),
      responses: { 201: response('the tenant, its owner and its API key (shown once)', signupResponse), 409: errors[409]('e-mail taken'), 422: errors[422]() },
    },
  },
  '/auth/login': {
    post: {
      security: [],
      summary: 'Session token (JWT) for e-mail and password (per-IP rate limit)',
      requestBody: jsonBody(loginBody),
      responses: { 200: response('session token', sessionTokenSchema), 401: errors[401]('bad credentials'), 403: errors[403]('e-mail not verified (when required)'), 422: errors[422]() },
    },
  },
  '/auth/verify-email': {
    get: {
      security: [],
      parameters: [{ name: 'token', in: 'query', required: true, schema: { type: 'string' } }],
      responses: { 200: response('verified', verifiedResponse), 401: errors[401]('invalid or expired link'), 409: errors[409]('used already'), 422: errors[422]() },
    },
  },
  '/auth/session': { post: { summary: 'Create a JWT session from the current credentials (an API key opens one for the tenant owner)', responses: { 200: response('session token', sessionTokenSchema), 404: errors[404]('the tenant has no user') } } },
  '/auth/me': { get: { summary: 'Current caller', responses: { 200: response('tenant and user', meResponse) } } },
  '/api-keys/rotate': { post: { summary: 'New API key; the old one is invalid at once', responses: { 200: response('the new key (shown once)', rotateResponse) } } },
});
