/**
 * The HTTP edge: the express application (everything under /api: public routes first, then authentication
 * and the tenant rate limit, pipeline step 1, for every tenant route; errors mapped once in
 * http/error-handler) and the server's request listener, which serves the governed tool call with the same
 * steps outside express (http/governed-edge.ts) and hands every other request to the app.
 */
import express, { type Express, type RequestHandler, Router } from 'express';
import type { GatewayDeps } from './deps';
import { authenticate } from './http/auth.middleware';
import { consoleStatic } from './http/console-static';
import { errorHandler } from './http/error-handler';
import { inputGuard } from './http/input-guard';
import { methodNotAllowedWithoutCredentials, notFoundOrMethodNotAllowed } from './http/not-found';
import { ipRateLimit, tenantRateLimit } from './http/rate-limit.middleware';
import { requestId } from './http/request-context';
import { keyScopeGuard } from './http/key-scope.middleware';
import { controlPlaneAudit } from './http/control-plane-audit';
import { roleGuard } from './http/permissions';
import { memberRoutes, publicMemberRoutes } from './http/routes/members.routes';
import { apiKeyRoutes } from './http/routes/api-keys.routes';
import { publicSsoRoutes, ssoRoutes } from './http/routes/sso.routes';
import { approvalRoutes } from './http/routes/approvals.routes';
import { auditRoutes } from './http/routes/audit.routes';
import { backupRoutes } from './http/routes/backup.routes';
import { authRoutes, publicAuthRoutes } from './http/routes/auth.routes';
import { credentialRoutes } from './http/routes/credentials.routes';
import { upstreamOAuthPublicRoutes, upstreamRoutes } from './http/routes/upstreams.routes';
import { hsmRoutes } from './http/routes/hsm.routes';
import { subjectRoutes } from './http/routes/subjects.routes';
import { githubRoutes } from './http/routes/github.routes';
import { managedRoutes } from './http/routes/managed.routes';
import { policyRoutes } from './http/routes/policy.routes';
import { publicRoutes } from './http/routes/public.routes';
import { anchorRoutes } from './http/routes/anchor.routes';
import { complianceRoutes } from './http/routes/compliance.routes';
import { merkleRoutes } from './http/routes/merkle.routes';
import { evidenceRoutes } from './http/routes/evidence.routes';
import { settingsRoutes } from './http/routes/settings.routes';
import { systemRoutes } from './http/routes/system.routes';
import { tenantRoutes } from './http/routes/tenants.routes';
import { toolCallHandler, toolCallRoutes } from './http/routes/tool-calls.routes';
import { webhookRoutes } from './http/routes/webhooks.routes';
import { mcpPublicRoutes, mcpRoutes } from './mcp/mcp.routes';
import { mcpOriginGuard, parseOrigins } from './mcp/origin-guard';
import { consoleSessionRoutes } from './http/routes/console-session.routes';
import { mcpAuthChallenge, oauthConsentRoutes, oauthGrantRoutes, oauthDiscoveryRoutes, oauthServerRoutes } from './http/routes/oauth.routes';
import { countInFlight } from './http/in-flight';
import { Admission, GOVERNED_PATHS } from './http/admission';
import { GOVERNED_BODY_LIMIT, governedJsonBody } from './http/governed-body';
import { observeRequests } from './http/access-log';
import { type EdgeRequest, type EdgeResponse, governedEdge } from './http/governed-edge';

export interface HttpEdge {
  /** every route (in-process tests reach it) */
  app: Express;
  /** the gateway server's listener: the governed call outside express, the rest to `app` */
  listener: (req: EdgeRequest, res: EdgeResponse) => void;
}

export function createHttpEdge(d: GatewayDeps): HttpEdge {
  const app = express();
  app.disable('x-powered-by');
  // no ETag (a SHA-1 of every JSON body): the API's answers are per call, never revalidated by clients
  app.set('etag', false);
  // false, a hop count or the ingress's ranges (never true): req.ip is the address the trusted hops appended
  app.set('trust proxy', d.config.trustProxy);
  // overload protection first: a governed call over the in-flight limits is shed before any work (http/admission.ts)
  const admission = new Admission(
    { perProcess: d.config.maxGovernedInFlight, perTenant: d.config.maxGovernedInFlightPerTenant, targetLatencyMs: d.config.targetLatencyMs },
    d.metrics,
    d.logger,
  );
  // what every request goes through first (the governed call's first steps too, in this order)
  const edgeSteps: RequestHandler[] = [requestId, countInFlight(d.metrics.httpInFlight), observeRequests(d.metrics, d.logger)];
  app.use(GOVERNED_PATHS.map((p) => `/api${p}`), admission.process);
  for (const step of edgeSteps) app.use(step);

  // JSON bodies up to 1 MB (params alone are limited to 64 KB by the tool-call schema).
  const jsonBody = express.json({ limit: GOVERNED_BODY_LIMIT, strict: false, type: ['application/json', 'application/*+json'] });
  const authenticated = authenticate({ apiKeys: d.apiKeys, sessions: d.sessions, tenants: d.tenants, adminEmails: d.adminEmails, oauth: d.oauth });
  const rateLimited = tenantRateLimit(d);

  // The governed tool call first, in a router of its own with the same chain as below (body, input rules,
  // authentication, the tenant's rate limit and in-flight limit, key scope), so it does not walk the
  // `/api` router's other routes, and its body is read without body-parser when it is plain JSON
  // (http/governed-body.ts; docs/history/performance-2026.md, round 3). Every other method and path goes on below.
  // The server's listener runs the same steps for `POST /api/mcp/tools/call` without express (below).
  const governedSteps = [governedJsonBody(jsonBody), inputGuard, authenticated, rateLimited, admission.tenant, keyScopeGuard, roleGuard];
  app.use('/api', toolCallRoutes(d, governedSteps));

  const api = Router();
  api.use(jsonBody);
  // NUL / lone surrogates anywhere, JSON deeper than 32, __proto__ keys: 422 before any route (http/input-guard.ts)
  api.use(inputGuard);

  api.use(systemRoutes(d));
  const authLimit = ipRateLimit({ redis: d.redis, perMinute: d.config.authRateLimitPerMinute, name: 'auth' });
  api.use(['/auth/signup', '/auth/login'], authLimit);
  api.use(publicAuthRoutes(d));
  // accepting an invitation: public (the token is the credential), per-IP limit like the sign-in routes
  api.use('/members/invitations/accept', authLimit);
  api.use(publicMemberRoutes(d));
  api.use(['/auth/refresh', '/auth/logout'], authLimit);
  api.use(consoleSessionRoutes(d));
  api.use(githubRoutes(d));
  // single sign-on with the tenant's OpenID Connect provider (per-IP limit like the sign-in routes)
  api.use('/auth/sso', authLimit);
  api.use(publicSsoRoutes(d));
  // an upstream authorization server's redirect back (the state and a binding cookie are the credential)
  api.use('/upstreams/oauth/callback', authLimit);
  api.use(upstreamOAuthPublicRoutes(d));
  // Origin and Host of the MCP endpoints, before authentication (DNS rebinding: mcp/origin-guard.ts)
  api.use('/mcp/server', mcpOriginGuard({ publicBaseUrl: d.config.publicBaseUrl, allowedOrigins: [...parseOrigins(d.config.mcpAllowedOrigins), ...d.oauthUrls.all.map((u) => u.origin)], local: d.config.profile === 'local' }));
  // OAuth 2.1 of the MCP endpoints: 401s name the resource metadata; the authorization server's endpoints
  api.use('/mcp/server', mcpAuthChallenge(d.oauthUrls));
  api.use(oauthServerRoutes(d.oauth, ipRateLimit({ redis: d.redis, perMinute: d.config.authRateLimitPerMinute, name: 'oauth' })));
  api.use(mcpPublicRoutes());
  // public transparency (opted-in tenants only, aggregates only): per-IP limit like the auth routes
  api.use(['/dashboard/public', '/transparency'], ipRateLimit({ redis: d.redis, perMinute: d.config.publicRateLimitPerMinute, name: 'public' }));
  api.use(publicRoutes(d));

  // no credentials and a wrong method on a known path (e.g. GET /auth/signup): 405, not 401 (http/not-found.ts)
  api.use(methodNotAllowedWithoutCredentials(api));
  api.use(authenticated);
  api.use(rateLimited);
  api.use(GOVERNED_PATHS, admission.tenant);
  // an agent-scoped key reaches tool calls, the MCP server and its own actions only (403 elsewhere)
  api.use(keyScopeGuard);
  // a signed-in member's role (http/permissions.ts: one table of every operation), before any route
  api.use(roleGuard);
  // changes of settings, policy, keys, members and consents: recorded with the member who made them
  api.use(controlPlaneAudit(d.controlPlane, d.logger));
  api.use(authRoutes(d));
  api.use(memberRoutes(d));
  api.use(apiKeyRoutes(d));
  api.use(toolCallRoutes(d));
  api.use(approvalRoutes(d));
  api.use(auditRoutes(d));
  api.use(settingsRoutes(d));
  api.use(ssoRoutes(d));
  api.use(tenantRoutes(d));
  api.use(policyRoutes(d));
  api.use(credentialRoutes(d));
  api.use(upstreamRoutes(d));
  api.use(hsmRoutes(d));
  api.use(subjectRoutes(d));
  api.use(merkleRoutes(d));
  api.use(evidenceRoutes(d));
  api.use(anchorRoutes(d));
  api.use(complianceRoutes(d));
  api.use(webhookRoutes(d));
  api.use(mcpRoutes(d));
  api.use(oauthConsentRoutes(d.oauth));
  api.use(oauthGrantRoutes(d.oauth));
  api.use(managedRoutes(d));
  api.use(backupRoutes(d));
  api.use(notFoundOrMethodNotAllowed(api));

  app.use('/api', api);
  // discovery of the MCP endpoints' OAuth (RFC 9728, RFC 8414) at the origin's root, where clients look
  app.use(oauthDiscoveryRoutes(d.oauthUrls));
  // discovery documents this server does not publish are a JSON 404, never the console's page
  app.use('/.well-known', (_req, res) => {
    res.status(404).json({ detail: 'Not found: no such discovery document' });
  });
  app.use(consoleStatic()); // the operator console at / (http/console-static.ts)
  app.use((_req, res) => {
    res.status(404).json({ detail: 'Not found: every endpoint is under /api/' });
  });
  const onError = errorHandler(d.logger);
  app.use(onError);
  return { app, listener: governedEdge(app, [admission.process, ...edgeSteps, ...governedSteps, toolCallHandler(d)], onError) };
}
