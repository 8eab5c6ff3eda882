/**
 * An OAuth-protected MCP server built from the MCP SDK's own server-side authorization code (its
 * `mcpAuthRouter`: RFC 8414 and RFC 9728 metadata, dynamic registration, authorization with PKCE S256,
 * token, revocation; its `requireBearerAuth` on the MCP endpoint), for what the SDK's example server does
 * not do: refresh tokens with rotation, short-lived access tokens on command, revocation (RFC 7009), a
 * revoked token answered with 401 (the example answers 500), and one subject per signed-in user.
 *
 * - The authorization server and the MCP endpoint share one origin: `<url>/` and `<url>/mcp`.
 * - "Sign-in": the user is the `fixture_user` cookie of the request to /authorize (default `demo`), approved
 *   at once, as a browser already signed in at the upstream.
 * - MCP tool `whoami`: the subject the token was issued to.
 * - `/control/*`: `POST ttl {seconds}` (access tokens issued from now on), `POST revoke-all` (every token
 *   the server issued is dropped), `GET state` (refreshes, revocations received, every token issued).
 */
import { randomUUID } from 'node:crypto';
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type Response } from 'express';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { mcpAuthRouter, getOAuthProtectedResourceMetadataUrl } from '@modelcontextprotocol/sdk/server/auth/router.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import { InvalidGrantError, InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { OAuthServerProvider, AuthorizationParams } from '@modelcontextprotocol/sdk/server/auth/provider.js';
import type { OAuthRegisteredClientsStore } from '@modelcontextprotocol/sdk/server/auth/clients.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { OAuthClientInformationFull, OAuthTokenRevocationRequest, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';

interface Grant {
  subject: string;
  clientId: string;
  resource?: string;
  scopes: string[];
}

export interface OAuthUpstreamState {
  /** access token lifetime of the tokens issued from now on */
  ttlSeconds: number;
  refreshes: number;
  /** token_type_hint of each revocation request received */
  revocations: string[];
  /** every access and refresh token issued (to search the gateway's stores for) */
  issued: string[];
}

export interface OAuthUpstream {
  /** `http://host:port`; the MCP endpoint is `<url>/mcp` */
  url: string;
  state: OAuthUpstreamState;
  revokeAll(): void;
  close(): Promise<void>;
}

export async function startOAuthUpstream(o: { port: number; host?: string }): Promise<OAuthUpstream> {
  const host = o.host ?? '127.0.0.1';
  const url = `http://${host}:${o.port}`;
  const mcpUrl = new URL(`${url}/mcp`);
  const state: OAuthUpstreamState = { ttlSeconds: 3600, refreshes: 0, revocations: [], issued: [] };
  const clients = new Map<string, OAuthClientInformationFull>();
  const codes = new Map<string, { grant: Grant; challenge: string; redirectUri: string }>();
  const access = new Map<string, Grant & { expiresAt: number }>();
  const refresh = new Map<string, Grant>();

  const issue = (g: Grant): OAuthTokens => {
    const token = randomUUID();
    const rt = randomUUID();
    access.set(token, { ...g, expiresAt: Date.now() + state.ttlSeconds * 1000 });
    refresh.set(rt, g);
    state.issued.push(token, rt);
    return { access_token: token, token_type: 'bearer', expires_in: state.ttlSeconds, refresh_token: rt, scope: g.scopes.join(' ') };
  };

  const clientsStore: OAuthRegisteredClientsStore = {
    getClient: async (id) => clients.get(id),
    registerClient: async (c) => {
      const full = c as OAuthClientInformationFull;
      clients.set(full.client_id, full);
      return full;
    },
  };

  const provider: OAuthServerProvider = {
    clientsStore,
    async authorize(client: OAuthClientInformationFull, params: AuthorizationParams, res: Response) {
      const cookie = /(?:^|;\s*)fixture_user=([A-Za-z0-9_.-]+)/.exec(res.req.headers.cookie ?? '');
      const code = randomUUID();
      codes.set(code, { grant: { subject: cookie?.[1] ?? 'demo', clientId: client.client_id, resource: params.resource?.href, scopes: params.scopes ?? [] }, challenge: params.codeChallenge, redirectUri: params.redirectUri });
      const target = new URL(params.redirectUri);
      target.searchParams.set('code', code);
      if (params.state !== undefined) target.searchParams.set('state', params.state);
      res.redirect(target.href);
    },
    async challengeForAuthorizationCode(_client, code) {
      const c = codes.get(code);
      if (!c) throw new InvalidGrantError('unknown authorization code');
      return c.challenge;
    },
    async exchangeAuthorizationCode(client, code, _verifier, _redirectUri, resource) {
      const c = codes.get(code);
      codes.delete(code);
      if (!c || c.grant.clientId !== client.client_id) throw new InvalidGrantError('unknown authorization code');
      if (resource && resource.href !== mcpUrl.href) throw new InvalidGrantError(`resource ${resource.href} is not this server`);
      return issue(c.grant);
    },
    async exchangeRefreshToken(client, refreshToken) {
      const g = refresh.get(refreshToken);
      if (!g || g.clientId !== client.client_id) throw new InvalidGrantError('refresh token revoked or unknown');
      // rotation: the old refresh token is spent
      refresh.delete(refreshToken);
      state.refreshes++;
      return issue(g);
    },
    async verifyAccessToken(token): Promise<AuthInfo> {
      const a = access.get(token);
      if (!a || a.expiresAt < Date.now()) throw new InvalidTokenError('token expired or revoked');
      return { token, clientId: a.clientId, scopes: a.scopes, expiresAt: Math.floor(a.expiresAt / 1000), resource: a.resource ? new URL(a.resource) : undefined, extra: { subject: a.subject } };
    },
    async revokeToken(_client, request: OAuthTokenRevocationRequest) {
      state.revocations.push(request.token_type_hint ?? '');
      access.delete(request.token);
      refresh.delete(request.token);
    },
  };

  const app = express();
  app.use(
    mcpAuthRouter({
      provider,
      issuerUrl: new URL(url),
      resourceServerUrl: mcpUrl,
      scopesSupported: ['mcp:tools'],
      resourceName: 'OAuth fixture',
      authorizationOptions: { rateLimit: false },
      clientRegistrationOptions: { rateLimit: false },
      tokenOptions: { rateLimit: false },
      revocationOptions: { rateLimit: false },
    }),
  );
  app.use(express.json());
  app.post('/control/ttl', (req, res) => {
    state.ttlSeconds = Number((req.body as { seconds?: number }).seconds ?? 3600);
    res.json({ ttl_seconds: state.ttlSeconds });
  });
  const revokeAll = () => {
    access.clear();
    refresh.clear();
  };
  app.post('/control/revoke-all', (_req, res) => {
    revokeAll();
    res.json({ revoked: true });
  });
  app.get('/control/state', (_req, res) => res.json(state));
  const bearer = requireBearerAuth({ verifier: provider, requiredScopes: [], resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(mcpUrl), expectedResource: mcpUrl });
  // stateless Streamable HTTP: one server per request, the caller's AuthInfo in each tool's extra
  app.post('/mcp', bearer, async (req, res) => {
    const server = new McpServer({ name: 'oauth-fixture', version: '1.0.0' });
    server.registerTool('whoami', { description: 'The subject the access token was issued to' }, async (extra) => ({
      content: [{ type: 'text', text: String((extra.authInfo?.extra as { subject?: string } | undefined)?.subject ?? '') }],
    }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });
  app.all('/mcp', bearer, (_req, res) => {
    res.status(405).set('allow', 'POST').end();
  });
  const server: http.Server = await new Promise((r) => {
    const s = app.listen(o.port, host, () => r(s));
  });
  return {
    url: `http://${host}:${(server.address() as AddressInfo).port}`,
    state,
    revokeAll,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
