/**
 * Single sign-on (docs/auth.md, "Single sign-on (OIDC)"): the tenant's configuration (GET/PUT/DELETE
 * /api/settings/sso, owners and admins) and the public sign-in (GET /api/auth/sso/start, GET
 * /api/auth/sso/callback). A refused sign-in is answered with its status and a precise `detail` plus a
 * stable `code` (JSON: the browser shows it; the console's sign-in page links back to a new attempt).
 */
import { type Request, type Response, Router } from 'express';
import { z } from 'zod';
import type { TenantsFeature } from '../../features/tenants.feature';
import { addPaths, jsonBody, queryParam } from '../../openapi/openapi';
import { errors, reply, response, timestamp } from '../../openapi/schema';
import { SSO_ROLES, ssoConfigBody } from '../../sso/sso-config';
import { SsoRefusal } from '../../sso/sso.service';
import { SSO_STATE_TTL_SECONDS } from '../../sso/sso-state';
import { authOf } from '../request-context';
import { parseWith } from '../validation';
import { startConsoleSession } from './console-session.routes';

export const SSO_COOKIE = 'agw_sso';
const SSO_COOKIE_PATH = '/api/auth/sso';

const ssoRole = z.enum(SSO_ROLES as [string, ...string[]]);
const ssoConfigView = z
  .object({
    issuer: z.string(),
    client_id: z.string(),
    client_secret_set: z.literal(true).meta({ description: 'the secret is stored sealed and never shown' }),
    domains: z.array(z.string()),
    default_role: ssoRole,
    groups_claim: z.string().nullable(),
    group_roles: z.record(z.string(), ssoRole),
    require_sso: z.boolean(),
    redirect_uri: z.string().meta({ description: 'register this redirect URI at the identity provider' }),
    updated_by: z.string(),
    updated_at: timestamp(),
  })
  .meta({ id: 'SsoConfig', description: "A tenant's OpenID Connect provider (the client secret never included)" });
const deletedSchema = z.object({ deleted: z.literal(true) });
const startQuery = z.object({ tenant: z.string().trim().min(1, 'tenant: your work e-mail address, its domain, or the tenant slug').max(320) });

function cookieOf(req: Request, name: string): string | undefined {
  for (const part of (req.get('cookie') ?? '').split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) return decodeURIComponent(part.slice(i + 1).trim());
  }
  return undefined;
}

function whoChanges(req: Request): string {
  const a = authOf(req);
  if (a.method === 'jwt' && !a.viaApiKey) return a.email ?? `user:${a.userId}`;
  return a.method === 'jwt' && a.email ? `api_key_session:${a.email}` : 'tenant_key';
}

function refuse(res: Response, e: SsoRefusal): void {
  res.status(e.status).json({ detail: e.message, code: e.code });
}

/** Public: the sign-in. */
export function publicSsoRoutes(d: Pick<TenantsFeature, 'config' | 'logger' | 'sso' | 'consoleRefresh' | 'sessions' | 'tenants'>): Router {
  const r = Router();
  const secure = d.config.profile !== 'local';
  r.get('/auth/sso/start', async (req, res) => {
    const { tenant } = parseWith(startQuery, { tenant: req.query.tenant }, 'query');
    try {
      const { url, browserCookie } = await d.sso.start(tenant);
      // Lax: the provider's redirect back is a cross-site top-level GET, which must carry it
      res.cookie(SSO_COOKIE, browserCookie, { httpOnly: true, sameSite: 'lax', secure, path: SSO_COOKIE_PATH, maxAge: SSO_STATE_TTL_SECONDS * 1000 });
      res.redirect(302, url);
    } catch (e) {
      if (e instanceof SsoRefusal) return refuse(res, e);
      throw e;
    }
  });
  r.get('/auth/sso/callback', async (req, res) => {
    const url = new URL(req.originalUrl, 'http://callback.invalid');
    try {
      const who = await d.sso.finish(url, cookieOf(req, SSO_COOKIE));
      res.clearCookie(SSO_COOKIE, { httpOnly: true, sameSite: 'lax', secure, path: SSO_COOKIE_PATH });
      const session = await d.sessions.issue({ userId: who.userId, tenantId: who.tenantId, email: who.email });
      // the console resumes the session from the refresh cookie (POST /api/auth/refresh): no token in the URL
      await startConsoleSession(d, res, session.access_token);
      d.logger.info({ tenantId: who.tenantId, userId: who.userId, created: who.created }, 'SSO sign-in');
      res.redirect(302, d.sso.consoleUrl);
    } catch (e) {
      if (e instanceof SsoRefusal) return refuse(res, e);
      throw e;
    }
  });
  return r;
}

/** Authenticated: the configuration (the permission table lets owners and admins in). */
export function ssoRoutes(d: Pick<TenantsFeature, 'config' | 'logger' | 'sso'>): Router {
  const r = Router();
  r.get('/settings/sso', async (req, res) => {
    reply(res, ssoConfigView, await d.sso.view(authOf(req).tenantId));
  });
  r.put('/settings/sso', async (req, res) => {
    const body = parseWith(ssoConfigBody, req.body, 'body');
    reply(res, ssoConfigView, await d.sso.put(authOf(req).tenantId, body, whoChanges(req)));
  });
  r.delete('/settings/sso', async (req, res) => {
    reply(res, deletedSchema, await d.sso.remove(authOf(req).tenantId, whoChanges(req)));
  });
  return r;
}

const refusal = (description: string) => ({
  description,
  content: { 'application/json': { schema: { type: 'object', required: ['detail', 'code'], properties: { detail: { type: 'string' }, code: { type: 'string' } } } } },
});
addPaths({
  '/settings/sso': {
    get: { summary: "The tenant's single sign-on (OIDC) configuration; the client secret is never included", responses: { 200: response('the configuration', ssoConfigView), 404: errors[404]('not configured') } },
    put: {
      summary: 'Configure single sign-on (OIDC): the provider, its client, the bound e-mail domains, the roles of members created at first sign-in, require_sso',
      requestBody: jsonBody(ssoConfigBody),
      responses: {
        200: response('the configuration saved (a control_plane audit record names the change)', ssoConfigView),
        409: errors[409]('a domain is bound to another tenant, or client_secret missing the first time'),
        422: errors[422]('invalid issuer, domain or role'),
      },
    },
    delete: { summary: 'Remove single sign-on (password sign-in works again)', responses: { 200: response('removed', deletedSchema), 404: errors[404]('not configured') } },
  },
  '/auth/sso/start': {
    get: {
      security: [],
      summary: "Sign in with the tenant's identity provider: redirects the browser to it (authorization code + PKCE S256, state and nonce bound to this browser)",
      parameters: [{ name: 'tenant', in: 'query', required: true, schema: { type: 'string' }, description: 'the work e-mail address, its domain, or the tenant slug' }],
      responses: { 302: { description: "to the provider's authorization endpoint (Location), with the HttpOnly agw_sso cookie" }, 404: errors[404]('no single sign-on for this tenant or domain'), 422: errors[422](), 502: refusal('the provider\'s discovery failed') },
    },
  },
  '/auth/sso/callback': {
    get: {
      security: [],
      summary: "The provider's redirect back: the member signed in (created at first sign-in), the console's session cookie set, redirect to the console",
      parameters: [
        queryParam('code'),
        queryParam('state'),
        queryParam('iss'),
      ],
      responses: {
        302: { description: "to the console (signed in: it resumes the session from the refresh cookie)" },
        400: refusal('missing, unknown or used state (code unknown_state), or a state of another browser (browser_mismatch)'),
        401: refusal('the provider refused, or its answer failed validation: issuer, audience, nonce, signature, PKCE (code token_rejected)'),
        403: refusal('no verified e-mail (email_verified not true) or an address outside the bound domains'),
        409: refusal('the address has an account in another tenant'),
        502: refusal('the provider\'s discovery failed'),
      },
    },
  },
});
