/**
 * The gateway as OAuth 2.1 authorization server of its MCP endpoints (docs/auth.md, "MCP clients: OAuth"),
 * behind the MCP SDK's own handlers (authorize, token, register, revoke: request parsing, PKCE S256
 * verification, client authentication, error format): this module is the SDK's `OAuthServerProvider`,
 * i.e. where the state lives and what a consent means.
 *
 * - Clients register dynamically (RFC 7591) as public clients (`token_endpoint_auth_method: none`): PKCE
 *   protects the code, and no client secret is ever stored.
 * - `/authorize` keeps the request and sends the browser to the console's consent page; a signed-in human
 *   of a tenant picks the agent identity and the scopes (`decide`), which makes a grant and a code.
 * - Tokens are random, stored as SHA-256 only, audience-bound to the MCP resource (RFC 8707) at the public
 *   origin the client was sent to /authorize at (PUBLIC_ORIGINS, public-origins.ts), and good there only: access 1 h,
 *   refresh 30 days and rotated on every use; a refresh token used twice revokes its whole grant; a refused
 *   refresh (expired, scope, resource) leaves the token usable; no token outlives its grant.
 * - A grant lives OAUTH_GRANT_MAX_AGE_DAYS at most; the tenant lists and revokes grants (GET/DELETE
 *   /api/oauth/grants), the tenant key's rotation ends them (setting oauth_grants_end_on_key_rotation), and
 *   a grant goes with the user who consented (its row references the user's, ON DELETE CASCADE).
 * - A token acts as an agent-scoped key of the tenant, named by the grant's agent identity.
 * - Every authorization response (the code, or an error) carries `iss`, the issuer of that origin's
 *   authorization server metadata (RFC 9207).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Request, Response } from 'express';
import type { OAuthRegisteredClientsStore } from '@modelcontextprotocol/sdk/server/auth/clients.js';
import { InvalidClientMetadataError, InvalidGrantError, InvalidScopeError, InvalidTargetError, InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { AuthorizationParams, OAuthServerProvider } from '@modelcontextprotocol/sdk/server/auth/provider.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { OAuthClientInformationFull, OAuthTokenRevocationRequest, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { ConflictError, ForbiddenError, InputError, NotFoundError, sha256Hex } from '@agw/shared';
import { type ClientMetadataDocuments, isUrlClientId } from './client-metadata-documents';
import { boundClientMetadata } from './client-rules';
import type { OauthRepository } from './oauth.repository';
import type { McpOauthUrls } from './public-origins';

/** Calling the tenant's governed tools through its MCP server. Approving is never a scope of an agent. */
export const MCP_SCOPES = ['mcp:tools'] as const;
const AGENT_NAME = /^[A-Za-z0-9._-]{1,64}$/;

export interface McpOauthOptions {
  repo: OauthRepository;
  /** the protected resource (the MCP server's URL) and its issuer at each public origin (public-origins.ts) */
  urls: McpOauthUrls;
  /** the console page where a human decides on request `id` */
  consentUrl(id: string): string;
  /** clients identified by an HTTPS client_id (client ID metadata documents) */
  documents?: ClientMetadataDocuments;
  accessTtlSeconds?: number;
  refreshTtlSeconds?: number;
  /** a grant's absolute lifetime (OAUTH_GRANT_MAX_AGE_DAYS): then the client must ask for consent again */
  grantMaxAgeSeconds?: number;
  clock?: () => Date;
}

/** What the gateway knows of a caller holding a valid access token. */
export interface OauthCaller {
  tenantId: string;
  agentName: string;
  clientId: string;
  grantId: string;
  scopes: string[];
  resource: string;
  /** the human who consented (the agent acts for them: a per_user upstream uses their connection) */
  userId?: string;
}

const secret = (prefix: string) => `${prefix}${randomBytes(32).toString('base64url')}`;
const sameResource = (a: string, b: string) => a.replace(/\/+$/, '') === b.replace(/\/+$/, '');
const INVALID_TOKEN = 'invalid, expired or revoked access token';

function redirectWith(uri: string, params: Record<string, string | undefined>): string {
  const u = new URL(uri);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) u.searchParams.set(k, v);
  return u.href;
}

export class McpOauthProvider implements OAuthServerProvider {
  private readonly accessTtl: number;
  private readonly refreshTtl: number;
  private readonly grantMaxAge: number;
  private readonly now: () => Date;

  /** where the consent page's URLs begin (the only redirect of /authorize for a client not yet validated) */
  readonly consentPrefix: string;

  constructor(private readonly o: McpOauthOptions) {
    this.consentPrefix = o.consentUrl('');
    this.accessTtl = o.accessTtlSeconds ?? 3600;
    this.refreshTtl = o.refreshTtlSeconds ?? 30 * 86400;
    this.grantMaxAge = o.grantMaxAgeSeconds ?? 90 * 86400;
    this.now = o.clock ?? (() => new Date());
  }

  get repo(): OauthRepository {
    return this.o.repo;
  }

  get urls(): McpOauthUrls {
    return this.o.urls;
  }

  /** The MCP resource at the origin a request came to (the audience its token must have). */
  resourceOf(req: Pick<Request, 'protocol' | 'host'>): string {
    return this.o.urls.of(req).resource;
  }

  /** The issuer of the authorization server a resource's clients were told of (RFC 9207 `iss`). */
  private issuerOf(resource: string): string {
    return this.o.urls.byResource(resource)?.issuer ?? resource.replace(/\/+$/, '').replace(/\/mcp\/server$/, '/oauth');
  }

  get clientsStore(): OAuthRegisteredClientsStore {
    return {
      getClient: async (clientId) => {
        if (this.o.documents && isUrlClientId(clientId)) return this.o.documents.get(clientId);
        if (!clientId || clientId.length > 256 || clientId.includes('\u0000')) return undefined;
        const metadata = await this.o.repo.client(clientId);
        return metadata ? ({ ...metadata, client_id: clientId } as OAuthClientInformationFull) : undefined;
      },
      registerClient: async (client) => {
        const full = client as OAuthClientInformationFull;
        if (full.client_secret || (full.token_endpoint_auth_method && full.token_endpoint_auth_method !== 'none')) {
          throw new InvalidClientMetadataError('only public clients may register: token_endpoint_auth_method must be "none" (PKCE protects the code)');
        }
        const bounded = boundClientMetadata(full);
        if ('problem' in bounded) throw new InvalidClientMetadataError(bounded.problem);
        const clientId = full.client_id || randomUUID();
        const registered = { ...bounded.metadata, client_id: clientId, client_id_issued_at: full.client_id_issued_at ?? Math.floor(this.now().getTime() / 1000), token_endpoint_auth_method: 'none' };
        await this.o.repo.insertClient(clientId, registered);
        return registered;
      },
    };
  }

  /** Keeps the request and sends the browser to the consent page (or back with an error). */
  async authorize(client: OAuthClientInformationFull, params: AuthorizationParams, res: Response): Promise<void> {
    const scopes = params.scopes?.length ? params.scopes : [...MCP_SCOPES];
    // the origin the client was sent here at: its resource is the only one this request may name
    const at = this.o.urls.of(res.req);
    const resource = params.resource?.href ?? at.resource;
    const back = (error: string, description: string) => res.redirect(302, redirectWith(params.redirectUri, { error, error_description: description, state: params.state, iss: at.issuer }));
    const texts = [params.state ?? '', params.codeChallenge, params.redirectUri];
    if (texts.some((x) => x.length > 2048 || x.includes('\u0000'))) return back('invalid_request', 'a parameter is too long or holds a NUL character');
    if (scopes.some((s) => !(MCP_SCOPES as readonly string[]).includes(s))) return back('invalid_scope', `scopes offered: ${MCP_SCOPES.join(' ')}`);
    if (!sameResource(resource, at.resource)) return back('invalid_target', `this authorization server (${at.issuer}) issues tokens for ${at.resource} only`);
    const id = randomBytes(18).toString('base64url');
    const now = this.now();
    await this.o.repo.insertRequest({
      id,
      client_id: client.client_id,
      redirect_uri: params.redirectUri,
      // set by the route (oauth.routes.ts) from the raw request: the SDK fills in a sole registered URI
      redirect_uri_sent: res.locals.redirectUriSent !== false,
      state: params.state ?? null,
      scopes,
      code_challenge: params.codeChallenge,
      resource: at.resource,
      expires_at: new Date(now.getTime() + 10 * 60_000),
    });
    res.redirect(302, this.o.consentUrl(id));
  }

  /** What the consent page shows of a request. */
  async describe(id: string) {
    const r = await this.request(id);
    const client: Record<string, unknown> = (await Promise.resolve(this.clientsStore.getClient(r.client_id)).catch(() => undefined)) ?? {};
    return {
      id: r.id,
      client_id: r.client_id,
      client_name: typeof client.client_name === 'string' ? client.client_name : null,
      client_uri: typeof client.client_uri === 'string' ? client.client_uri : null,
      // a dynamically registered client names itself; a metadata document's host vouches for its client
      client_verified: isUrlClientId(r.client_id),
      redirect_host: new URL(r.redirect_uri).host,
      scopes: r.scopes,
      resource: r.resource,
      expires_at: new Date(r.expires_at).toISOString(),
    };
  }

  /** A signed-in human's decision: approved, a grant and a code for the client; denied, the client is told. */
  async decide(id: string, human: { tenantId: string; userId: string; email: string }, d: { approve: boolean; agentName?: string; scopes?: string[] }): Promise<{ redirect_to: string }> {
    const r = await this.request(id);
    if (d.approve) {
      if (!d.agentName || !AGENT_NAME.test(d.agentName)) throw InputError.at(['body', 'agent_name'], 'agent_name is 1-64 of A-Z a-z 0-9 . _ - (the agent_id of its audit records)', 'string_pattern_mismatch');
      const scopes = d.scopes ?? r.scopes;
      if (!scopes.length || scopes.some((s) => !r.scopes.includes(s))) throw InputError.at(['body', 'scopes'], `scopes are a non-empty subset of what the client asked for: ${r.scopes.join(' ')}`, 'value_error');
      d = { ...d, scopes };
    }
    const now = this.now();
    if (!(await this.o.repo.decide(id, now))) throw new ConflictError('This authorization request was decided already, or has expired');
    const iss = this.issuerOf(r.resource);
    if (!d.approve) return { redirect_to: redirectWith(r.redirect_uri, { error: 'access_denied', error_description: 'the request was denied', state: r.state ?? undefined, iss }) };
    const grantId = randomUUID();
    const made = await this.o.repo.insertGrant({
      id: grantId,
      tenant_id: human.tenantId,
      client_id: r.client_id,
      agent_name: d.agentName!,
      scopes: d.scopes!,
      resource: r.resource,
      granted_by: human.email,
      granted_by_user_id: human.userId,
      expires_at: new Date(now.getTime() + this.grantMaxAge * 1000),
    });
    // the grant lives as long as the user who consented: a session of a removed user makes none
    if (!made) throw new ForbiddenError('The signed-in user is no longer a user of this tenant: sign in again');
    const code = secret('mcpac_');
    await this.o.repo.insertCode({ code_hash: sha256Hex(code), grant_id: grantId, client_id: r.client_id, redirect_uri: r.redirect_uri, redirect_uri_sent: r.redirect_uri_sent, code_challenge: r.code_challenge, expires_at: new Date(now.getTime() + 10 * 60_000) });
    return { redirect_to: redirectWith(r.redirect_uri, { code, state: r.state ?? undefined, iss }) };
  }

  async challengeForAuthorizationCode(client: OAuthClientInformationFull, code: string): Promise<string> {
    const row = await this.o.repo.code(sha256Hex(code));
    if (!row || row.client_id !== client.client_id) throw new InvalidGrantError('invalid authorization code');
    return row.code_challenge;
  }

  async exchangeAuthorizationCode(client: OAuthClientInformationFull, code: string, _verifier?: string, redirectUri?: string, resource?: URL): Promise<OAuthTokens> {
    const hash = sha256Hex(code);
    const row = await this.o.repo.useCode(hash, this.now());
    if (!row) {
      // a code used twice: the tokens issued from it go too (RFC 6749 §4.1.2)
      const used = await this.o.repo.code(hash);
      if (used?.used_at) await this.o.repo.revokeGrant(used.grant_id, this.now());
      throw new InvalidGrantError('invalid, expired or already used authorization code');
    }
    if (row.client_id !== client.client_id) throw new InvalidGrantError('the code was issued to another client');
    if (redirectUri === undefined && row.redirect_uri_sent) throw new InvalidGrantError('redirect_uri is required: the authorization request carried one (RFC 6749 §4.1.3)');
    if (redirectUri !== undefined && redirectUri !== row.redirect_uri) throw new InvalidGrantError('redirect_uri does not match the authorization request');
    return this.issue(row.grant_id, undefined, resource?.href);
  }

  async exchangeRefreshToken(client: OAuthClientInformationFull, refreshToken: string, scopes?: string[], resource?: URL): Promise<OAuthTokens> {
    const hash = sha256Hex(refreshToken);
    const t = await this.o.repo.token(hash);
    const now = this.now();
    if (!t || t.kind !== 'refresh' || t.grant.client_id !== client.client_id) throw new InvalidGrantError('invalid refresh token');
    const reused = async () => {
      // used before (rotation makes every refresh token single-use): someone else holds a copy
      await this.o.repo.revokeGrant(t.grant.id, now);
      return new InvalidGrantError('refresh token already used: every token of this grant is revoked');
    };
    if (t.revoked_at && !t.grant.revoked_at) throw await reused();
    if (t.grant.revoked_at) throw new InvalidGrantError('the grant was revoked; the client must ask for consent again');
    // every check before the token is consumed: a refused refresh leaves it usable
    if (t.grant.expires_at <= now) throw new InvalidGrantError('the grant expired; the client must ask for consent again');
    if (t.expires_at <= now) throw new InvalidGrantError('refresh token expired');
    if (scopes?.some((s) => !t.grant.scopes.includes(s))) throw new InvalidScopeError(`the grant holds ${t.grant.scopes.join(' ')}`);
    if (resource && !sameResource(resource.href, t.grant.resource)) throw new InvalidTargetError(`the grant is for ${t.grant.resource}`);
    if (!this.o.urls.byResource(t.grant.resource)) throw new InvalidGrantError(`the grant is for another resource (${t.grant.resource})`);
    if (!(await this.o.repo.revokeToken(hash, now))) throw await reused();
    return this.issue(t.grant.id, scopes);
  }

  async verifyAccessToken(token: string): Promise<AuthInfo> {
    const found = await this.check(token);
    if ('problem' in found) throw new InvalidTokenError(found.problem);
    const { caller } = found;
    return { token, clientId: caller.clientId, scopes: caller.scopes, resource: new URL(caller.resource), extra: { tenantId: caller.tenantId, agentName: caller.agentName } };
  }

  /** The caller of a live access token presented to `resource` (default: PUBLIC_BASE_URL's), or undefined. */
  async caller(token: string, resource?: string): Promise<OauthCaller | undefined> {
    const found = await this.check(token, resource);
    return 'caller' in found ? found.caller : undefined;
  }

  /**
   * The caller of a live access token presented to `resource` (the MCP server at the origin the request came
   * to; default: PUBLIC_BASE_URL's), or why it is refused (the `error_description` of RFC 6750's invalid_token).
   */
  async check(token: string, resource: string = this.o.urls.resource): Promise<{ caller: OauthCaller } | { problem: string }> {
    if (!token.startsWith('mcpat_')) return { problem: INVALID_TOKEN };
    const t = await this.o.repo.token(sha256Hex(token));
    const now = this.now();
    if (!t || t.kind !== 'access' || t.revoked_at || t.grant.revoked_at || t.expires_at <= now || t.grant.expires_at <= now) return { problem: INVALID_TOKEN };
    // the token's audience (RFC 8707) is the MCP resource it was issued for, at every use: the server at
    // another public origin is another resource
    if (!sameResource(t.grant.resource, resource)) {
      return { problem: this.o.urls.byResource(t.grant.resource) ? `the access token was issued for ${t.grant.resource}, not for ${resource}` : INVALID_TOKEN };
    }
    if (!t.grant.last_used_at || now.getTime() - new Date(t.grant.last_used_at).getTime() >= 60_000) await this.o.repo.touchGrant(t.grant.id, now);
    return { caller: { tenantId: t.grant.tenant_id, agentName: t.grant.agent_name, clientId: t.grant.client_id, grantId: t.grant.id, scopes: t.grant.scopes, resource: t.grant.resource, ...(t.grant.granted_by_user_id ? { userId: t.grant.granted_by_user_id } : {}) } };
  }

  async revokeToken(client: OAuthClientInformationFull, request: OAuthTokenRevocationRequest): Promise<void> {
    const hash = sha256Hex(request.token);
    const t = await this.o.repo.token(hash);
    if (!t || t.grant.client_id !== client.client_id) return; // unknown tokens are not an error (RFC 7009)
    // revoking a refresh token ends the grant (its access tokens too); an access token goes alone
    if (t.kind === 'refresh') await this.o.repo.revokeGrant(t.grant.id, this.now());
    else await this.o.repo.revokeToken(hash, this.now());
  }

  private async request(id: string) {
    const r = await this.o.repo.request(id);
    if (!r) throw new NotFoundError('No such authorization request');
    if (r.decided_at || new Date(r.expires_at) <= this.now()) throw new ConflictError('This authorization request was decided already, or has expired');
    return r;
  }

  private async issue(grantId: string, scopes?: string[], resource?: string): Promise<OAuthTokens> {
    const now = this.now().getTime();
    const access = secret('mcpat_');
    const refresh = secret('mcprt_');
    const grant = await this.o.repo.grant(grantId);
    if (!grant || grant.revoked_at) throw new InvalidGrantError('the grant was revoked; the client must ask for consent again');
    // the token request's resource (RFC 8707) is the one the authorization request was for, at a listed origin
    if (resource !== undefined && !sameResource(resource, grant.resource)) throw new InvalidTargetError(`tokens of this authorization are issued for ${grant.resource} only`);
    if (!this.o.urls.byResource(grant.resource)) throw new InvalidGrantError(`the grant is for another resource (${grant.resource})`);
    // no token outlives its grant
    const end = new Date(grant.expires_at).getTime();
    if (end <= now) throw new InvalidGrantError('the grant expired; the client must ask for consent again');
    const accessEnd = Math.min(now + this.accessTtl * 1000, end);
    await this.o.repo.insertTokens(grantId, [
      { token_hash: sha256Hex(access), kind: 'access', expires_at: new Date(accessEnd) },
      { token_hash: sha256Hex(refresh), kind: 'refresh', expires_at: new Date(Math.min(now + this.refreshTtl * 1000, end)) },
    ]);
    return { access_token: access, token_type: 'Bearer', expires_in: Math.floor((accessEnd - now) / 1000), refresh_token: refresh, scope: (scopes ?? grant.scopes ?? [...MCP_SCOPES]).join(' ') };
  }
}
