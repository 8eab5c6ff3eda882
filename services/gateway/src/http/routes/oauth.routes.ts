/**
 * OAuth 2.1 for the MCP endpoints (docs/auth.md, "MCP clients: OAuth"):
 * - discovery at the origin's root, where RFC 9728 and RFC 8414 put it: the protected resource metadata
 *   of the MCP server (`/.well-known/oauth-protected-resource/api/mcp/server`, and the root form) and the
 *   authorization server metadata (`/.well-known/oauth-authorization-server/api/oauth`, and the root form);
 * - the authorization server under /api/oauth: the MCP SDK's own handlers for authorize, token, register
 *   and revoke, on our provider (mcp-oauth-provider.ts), behind the per-IP limit of the sign-in routes;
 * - the consent a signed-in human gives in the console (GET/POST /api/oauth/requests/{id}).
 * A 401 of the MCP endpoints names the resource metadata in `WWW-Authenticate` (mcpAuthChallenge).
 * Every document and URL is that of the public origin the request came to (PUBLIC_ORIGINS,
 * public-origins.ts), or PUBLIC_BASE_URL's when the origin is not listed.
 */
import { authorizationHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/authorize.js';
import { metadataHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/metadata.js';
import { clientRegistrationHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/register.js';
import { revocationHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/revoke.js';
import { tokenHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/token.js';
import type { OAuthMetadata, OAuthProtectedResourceMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
import express, { type NextFunction, type Request, type RequestHandler, type Response, Router } from 'express';
import { z } from 'zod';
import { ForbiddenError, InputError, NotFoundError } from '@agw/shared';
import { addPaths, jsonBody, pathParam } from '../../openapi/openapi';
import { errors, reply, response, timestamp } from '../../openapi/schema';
import { type AuthContext, authOf } from '../request-context';
import { isHumanSession } from '../../tenants/auth-context';
import { isUuid } from '../params';
import { parseWith } from '../validation';
import { isUrlClientId } from '../../oauth/client-metadata-documents';
import { MCP_SCOPES, type McpOauthProvider } from '../../oauth/mcp-oauth-provider';
import { type McpOauthUrls, type OriginUrls, mcpOauthUrls } from '../../oauth/public-origins';

export { type McpOauthUrls, type OriginUrls, mcpOauthUrls };

/** The human-readable documentation of the authorization server (RFC 8414 `service_documentation`). */
export const SERVICE_DOCUMENTATION = 'https://github.com/agent-governance-gateway/agent-governance-gateway/blob/main/docs/auth.md';

export function authorizationServerMetadata(u: OriginUrls): OAuthMetadata {
  return {
    issuer: u.issuer,
    authorization_endpoint: `${u.issuer}/authorize`,
    token_endpoint: `${u.issuer}/token`,
    registration_endpoint: `${u.issuer}/register`,
    revocation_endpoint: `${u.issuer}/revoke`,
    response_types_supported: ['code'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none'],
    revocation_endpoint_auth_methods_supported: ['none'],
    scopes_supported: [...MCP_SCOPES],
    client_id_metadata_document_supported: true,
    // RFC 9207: every authorization response carries `iss` (this issuer), success and error alike
    authorization_response_iss_parameter_supported: true,
    service_documentation: SERVICE_DOCUMENTATION,
  };
}

export function protectedResourceMetadata(u: OriginUrls): OAuthProtectedResourceMetadata {
  return {
    resource: u.resource,
    authorization_servers: [u.issuer],
    scopes_supported: [...MCP_SCOPES],
    bearer_methods_supported: ['header'],
    resource_name: 'Agent Governance Gateway: governed MCP tools',
  };
}

/** Discovery documents at the origin's root (mounted on the app, before the /.well-known 404): the asked origin's. */
export function oauthDiscoveryRoutes(u: McpOauthUrls): Router {
  const r = Router();
  const apiPath = new URL(u.issuer).pathname.replace(/\/oauth$/, '');
  const perOrigin = (doc: (o: OriginUrls) => object): RequestHandler => {
    const handlers = new Map(u.all.map((o) => [o.origin, metadataHandler(doc(o) as OAuthMetadata)]));
    return (req, res, next) => handlers.get(u.of(req).origin)!(req, res, next);
  };
  const prm = perOrigin(protectedResourceMetadata);
  const as = perOrigin(authorizationServerMetadata);
  r.use(`/.well-known/oauth-protected-resource${apiPath}/mcp/server`, prm);
  r.use(`/.well-known/oauth-authorization-server${apiPath}/oauth`, as);
  r.use('/.well-known/oauth-protected-resource', exactly(prm));
  r.use('/.well-known/oauth-authorization-server', exactly(as));
  return r;
}

/** A handler for its mount path only (the root forms must not answer for every suffix). */
const exactly = (h: RequestHandler): RequestHandler => (req, res, next) => (req.path === '/' ? h(req, res, next) : next());

/** The authorization server's endpoints under /api/oauth (no credentials: they are the way to get one). */
export function oauthServerRoutes(provider: McpOauthProvider, limit: RequestHandler): Router {
  const r = Router();
  // the SDK's own per-process limits are off: the fleet's per-IP limit (Redis, shared by replicas) applies
  r.use(['/oauth/authorize', '/oauth/token', '/oauth/register', '/oauth/revoke'], limit);
  r.use('/oauth/authorize', express.urlencoded({ extended: false }), issOnRedirect(provider), noOpenRedirect(provider.consentPrefix), authorizationHandler({ provider, rateLimit: false }));
  r.use('/oauth/token', tokenHandler({ provider, rateLimit: false }));
  r.use('/oauth/register', clientRegistrationHandler({ clientsStore: provider.clientsStore, rateLimit: false, clientSecretExpirySeconds: 0 }));
  r.use('/oauth/revoke', revocationHandler({ provider, rateLimit: false }));
  // discovery documents under the issuer's path are not served (RFC 8414's and RFC 9728's are at the
  // origin's root; no OpenID Connect): a JSON 404 before authentication, not a 401
  r.use('/oauth/.well-known', (req, res) => {
    res.status(404).json({ detail: `Not found: no discovery document at /api/oauth/.well-known${req.path === '/' ? '' : req.path}; this authorization server's metadata is at ${provider.urls.of(req).origin}/.well-known/oauth-authorization-server${new URL(provider.urls.issuer).pathname}` });
  });
  return r;
}

/**
 * RFC 9207: an authorization response sent back to the client's redirect URI (an error of the SDK's handler
 * or of the provider) carries `iss`, the issuer of the origin the request came to; the consent page's
 * redirect is no authorization response. The code and access_denied are sent by the consent (provider.decide).
 */
function issOnRedirect(provider: McpOauthProvider): RequestHandler {
  return (req, res, next) => {
    const issuer = provider.urls.of(req).issuer;
    const redirect = res.redirect.bind(res) as (status: number, url: string) => void;
    (res as unknown as { redirect: (a: number | string, b?: string) => void }).redirect = (a, b) => {
      const [status, url] = typeof a === 'number' ? [a, String(b)] : [302, a];
      if (url.startsWith(provider.consentPrefix) || !URL.canParse(url)) return redirect(status, url);
      const u = new URL(url);
      u.searchParams.set('iss', issuer);
      redirect(status, u.href);
    };
    next();
  };
}

/**
 * No open redirect (RFC 9700 §4.11.2): the SDK sends an error of a validated client back to its redirect URI,
 * but a dynamically registered client is self-asserted (anyone may register any https URI), so its errors
 * are answered here with a 400 (OAuth's JSON error), never a 302 elsewhere than the consent page. A client
 * identified by a metadata document (an HTTPS client_id whose host vouches for its redirect URIs) is
 * redirected as usual when the request names a redirect URI on that same host; otherwise it is treated as
 * unverified too (a document may list a URI on any host). Also notes whether the request carried a redirect_uri (the token request must then
 * repeat it).
 */
function noOpenRedirect(consentPrefix: string): RequestHandler {
  return (req, res, next) => {
    const params = (req.method === 'POST' ? req.body : req.query) as Record<string, unknown> | undefined;
    res.locals.redirectUriSent = typeof params?.redirect_uri === 'string';
    const clientId = typeof params?.client_id === 'string' ? params.client_id : '';
    const redirectUri = typeof params?.redirect_uri === 'string' ? params.redirect_uri : '';
    if (isUrlClientId(clientId) && URL.canParse(redirectUri) && new URL(redirectUri).hostname === new URL(clientId).hostname) return next();
    const redirect = res.redirect.bind(res) as (status: number, url: string) => void;
    (res as unknown as { redirect: (a: number | string, b?: string) => void }).redirect = (a, b) => {
      const [status, url] = typeof a === 'number' ? [a, String(b)] : [302, a];
      if (url.startsWith(consentPrefix)) return redirect(status, url);
      const q = URL.canParse(url) ? new URL(url).searchParams : new URLSearchParams();
      res.status(400).json({ error: q.get('error') ?? 'invalid_request', error_description: q.get('error_description') ?? 'the authorization request is invalid' });
    };
    next();
  };
}

/** Every 401 of the MCP endpoints tells a client where to sign in (RFC 9728 §5.1), at the origin it asked. */
export function mcpAuthChallenge(u: McpOauthUrls) {
  const challenges = new Map(u.all.map((o) => [o.origin, `Bearer resource_metadata="${o.resourceMetadata}", scope="${MCP_SCOPES.join(' ')}"`]));
  return (req: Request, res: Response, next: NextFunction): void => {
    res.locals.authChallenge = challenges.get(u.of(req).origin);
    next();
  };
}

const requestSchema = z
  .object({
    id: z.string(),
    client_id: z.string(),
    client_name: z.string().nullable(),
    client_uri: z.string().nullable(),
    client_verified: z.boolean().meta({ description: 'false for a dynamically registered client (its client_name is self-asserted); true for a Client ID Metadata Document' }),
    redirect_host: z.string().meta({ description: 'where the browser goes back to: the client is trusted with the code there' }),
    scopes: z.array(z.string()),
    resource: z.string(),
    expires_at: timestamp(),
  })
  .meta({ id: 'OauthAuthorizationRequest' });
const decisionSchema = z
  .object({
    approve: z.boolean(),
    agent_name: z.string().max(64).optional().meta({ description: 'the agent identity the client acts as (agent_id of its audit records); needed to approve' }),
    scopes: z.array(z.enum(MCP_SCOPES)).optional(),
  })
  .strict();
const decidedSchema = z.object({ redirect_to: z.string().meta({ description: 'the client’s redirect URI with the code (or the error): the console sends the browser there' }) });
const idParams = [pathParam('id', { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' })];

/** The consent: what a request asks, and a signed-in human's decision (agent keys and API keys: 403). */
export function oauthConsentRoutes(provider: McpOauthProvider): Router {
  const r = Router();
  const human = (req: Request) => {
    const a = authOf(req);
    if (a.method !== 'jwt' || a.viaApiKey || !a.email || !a.userId) throw new ForbiddenError('Granting an MCP client access needs a signed-in human (the console), not an API key');
    return { tenantId: a.tenantId, userId: a.userId, email: a.email };
  };
  r.get('/oauth/requests/:id', async (req, res) => {
    human(req);
    reply(res, requestSchema, await provider.describe(req.params.id as string));
  });
  r.post('/oauth/requests/:id/decision', async (req, res) => {
    const who = human(req);
    const body = parseWith(decisionSchema, req.body ?? {}, 'body');
    reply(res, decidedSchema, await provider.decide(req.params.id as string, who, { approve: body.approve, agentName: body.agent_name, scopes: body.scopes }));
  });
  return r;
}

const grantSchema = z
  .object({
    id: z.string(),
    client_id: z.string(),
    client_name: z.string().nullable().meta({ description: 'the client’s own name (self-asserted when client_verified is false), or its metadata document’s host' }),
    client_verified: z.boolean().meta({ description: 'true for a client identified by a Client ID Metadata Document (its host vouches for it); false for a dynamically registered one' }),
    agent_name: z.string(),
    scopes: z.array(z.string()),
    granted_by: z.string(),
    created_at: timestamp(),
    last_used_at: timestamp().nullable().meta({ description: 'an access token of the grant last used (to the minute); null until used' }),
    expires_at: timestamp().meta({ description: 'the end of the grant (OAUTH_GRANT_MAX_AGE_DAYS after consent)' }),
    revoked_at: timestamp().nullable(),
  })
  .meta({ id: 'OauthGrant' });
const grantsSchema = z.object({ grants: z.array(grantSchema) });
const revokedSchema = z.object({ id: z.string(), revoked_at: timestamp() });
const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

/** Who may see and end grants: a signed-in human; the 403 says what the caller is. */
function grantsHuman(a: AuthContext, what: string): void {
  if (isHumanSession(a)) return;
  const caller =
    a.method === 'oauth' ? "an MCP client's OAuth token" : a.method === 'jwt' ? 'a session token made from an API key' : a.keyScope === 'agent' ? 'an agent-scoped API key' : 'an API key';
  throw new ForbiddenError(`OAuth grants are managed by a signed-in human: sign in (POST /api/auth/login) and send the session token; ${caller} cannot ${what}`);
}

/** The tenant's grants to MCP clients: list, and revoke (a signed-in human; everyone else 403). */
export function oauthGrantRoutes(provider: McpOauthProvider): Router {
  const r = Router();
  r.get('/oauth/grants', async (req, res) => {
    const a = authOf(req);
    grantsHuman(a, 'list them');
    const rows = await provider.repo.grants(a.tenantId);
    reply(res, grantsSchema, {
      grants: rows.map((g) => {
        const verified = isUrlClientId(g.client_id);
        const name = verified ? new URL(g.client_id).host : typeof g.metadata?.client_name === 'string' ? g.metadata.client_name : null;
        return {
          id: g.id,
          client_id: g.client_id,
          client_name: name,
          client_verified: verified,
          agent_name: g.agent_name,
          scopes: g.scopes,
          granted_by: g.granted_by,
          created_at: iso(g.created_at)!,
          last_used_at: iso(g.last_used_at),
          expires_at: iso(g.expires_at)!,
          revoked_at: iso(g.revoked_at),
        };
      }),
    });
  });
  r.delete('/oauth/grants/:id', async (req, res) => {
    const a = authOf(req);
    grantsHuman(a, 'revoke them');
    const id = String(req.params.id);
    if (!isUuid(id)) throw InputError.at(['path', 'id'], 'id is a grant id (a UUID)', 'uuid_parsing');
    const revokedAt = await provider.repo.revokeTenantGrant(a.tenantId, id.toLowerCase(), new Date());
    if (!revokedAt) throw new NotFoundError('OAuth grant not found');
    reply(res, revokedSchema, { id: id.toLowerCase(), revoked_at: revokedAt.toISOString() });
  });
  return r;
}

addPaths({
  '/oauth/grants': {
    get: {
      summary: 'The tenant’s OAuth grants to MCP clients, newest first, revoked ones included (signed-in human)',
      responses: { 200: response('the grants', grantsSchema), 403: errors[403]('not a signed-in human (API key, agent key, OAuth token, session made from an API key)') },
    },
  },
  '/oauth/grants/{id}': {
    delete: {
      parameters: [pathParam('id', { type: 'string', format: 'uuid' })],
      summary: 'Revoke an OAuth grant and every token of it (signed-in human)',
      responses: { 200: response('revoked (or revoked already: its revoked_at)', revokedSchema), 403: errors[403](), 404: errors[404](), 422: errors[422]('not a UUID') },
    },
  },
  '/oauth/requests/{id}': {
    get: { parameters: idParams, summary: 'An MCP client’s authorization request waiting for consent (signed-in human)', responses: { 200: response('the request', requestSchema), 403: errors[403](), 404: errors[404](), 409: errors[409]('decided already or expired') } },
  },
  '/oauth/requests/{id}/decision': {
    post: {
      parameters: idParams,
      summary: 'Approve (as an agent identity, with scopes) or deny an MCP client’s authorization request (signed-in human)',
      requestBody: jsonBody(decisionSchema),
      responses: { 200: response('where the browser goes next', decidedSchema), 403: errors[403](), 404: errors[404](), 409: errors[409]('decided already or expired'), 422: errors[422]() },
    },
  },
});

/** The authorization server's endpoints (the MCP SDK's handlers): OAuth's own wire formats. */
const oauthError = z.object({ error: z.string(), error_description: z.string().optional() }).meta({ id: 'OauthError' });
const form = (props: Record<string, z.ZodType>) => ({ required: true, content: { 'application/x-www-form-urlencoded': { schema: z.toJSONSchema(z.object(props)) } } });
addPaths({
  '/oauth/authorize': {
    get: {
      security: [],
      summary: 'OAuth 2.1 authorization endpoint (code + PKCE S256): sends the browser to the console’s consent page',
      responses: { 302: { description: 'to the consent page, or back to the client with an error' }, 400: response('an invalid request that cannot go back to the client', oauthError) },
    },
  },
  '/oauth/token': {
    post: {
      security: [],
      summary: 'OAuth 2.1 token endpoint: authorization_code (with code_verifier) and refresh_token (rotated on every use)',
      requestBody: form({ grant_type: z.enum(['authorization_code', 'refresh_token']), client_id: z.string(), code: z.string().optional(), code_verifier: z.string().optional(), redirect_uri: z.string().optional(), refresh_token: z.string().optional(), resource: z.string().optional() }),
      responses: {
        200: response('tokens', z.object({ access_token: z.string(), token_type: z.string(), expires_in: z.number(), refresh_token: z.string(), scope: z.string() })),
        400: response('OAuth error (invalid_grant, invalid_request, invalid_target, …)', oauthError),
      },
    },
  },
  '/oauth/register': {
    post: {
      security: [],
      summary: 'Dynamic client registration (RFC 7591): public clients (token_endpoint_auth_method none)',
      requestBody: jsonBody(z.looseObject({ redirect_uris: z.array(z.string()), client_name: z.string().optional(), token_endpoint_auth_method: z.literal('none').optional() })),
      responses: { 201: response('the registered client', z.looseObject({ client_id: z.string() })), 400: response('invalid client metadata', oauthError) },
    },
  },
  '/oauth/revoke': {
    post: { security: [], summary: 'Token revocation (RFC 7009): a refresh token ends its grant', requestBody: form({ token: z.string(), client_id: z.string(), token_type_hint: z.string().optional() }), responses: { 200: response('revoked (or unknown: not an error)', z.object({})), 400: response('OAuth error', oauthError) } },
  },
});
