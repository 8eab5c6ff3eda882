/**
 * Upstreams that need OAuth (docs/federation.md, "Upstreams that need OAuth"): the vault is the MCP client
 * of the authorization spec, with the SDK's own client functions (`@modelcontextprotocol/sdk/client/auth`),
 * every request through the tenant's egress rule.
 *
 * - `prepare` (registration): the upstream's protected-resource metadata (RFC 9728) names its authorization
 *   server, whose metadata is read (RFC 8414, else OpenID discovery); the gateway is identified by its
 *   Client ID Metadata Document when the server supports those and the gateway's URL is HTTPS, else by
 *   dynamic registration (RFC 7591), else by the client the tenant registered there (`client_id`,
 *   `client_secret`). The resource indicator (RFC 8707) is the upstream's canonical URL.
 * - `start`: an authorization URL with PKCE S256, the resource and a random `state`; the state's SHA-256
 *   keys a pending row bound to the human and to the browser that started it (the gateway's HttpOnly
 *   cookie, hashed), with the verifier sealed in the HSM; ten minutes to finish.
 * - `complete`: the state is taken (deleted) in one statement, the binding compared, the code exchanged;
 *   the tokens are sealed (AAD `agw:upstream-grant:v1|<tenant>|<upstream>|<user>`) and never leave here.
 * - `accessToken`: opened per request, refreshed (rotation kept) 60 s before it expires; a refresh refused
 *   with `invalid_grant` deletes the connection (`AuthorizationRequired`).
 * - `disconnect`: revocation at the server (RFC 7009) where it offers it, then the row goes.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import {
  discoverOAuthServerInfo,
  exchangeAuthorization,
  refreshAuthorization,
  registerClient,
  startAuthorization,
} from '@modelcontextprotocol/sdk/client/auth.js';
import { checkResourceAllowed, resourceUrlFromServerUrl } from '@modelcontextprotocol/sdk/shared/auth-utils.js';
import type { AuthorizationServerMetadata, OAuthClientInformationMixed, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { AuthenticationError, InputError, type Logger } from '@agw/shared';
import { type Keyring, credentialsKeyId } from '../keys/keyring';
import type { SealedData } from '../hsm/hsm-backend';
import type { EgressFetch } from './upstream-credentials';
import type { GrantRow, OAuthGrantRepository } from './oauth-grants.repository';

/** How long a started authorization may take. */
export const PENDING_TTL_MS = 10 * 60_000;
/** A token is refreshed this long before it expires. */
const REFRESH_MARGIN_MS = 60_000;

export type ClientRegistration = 'metadata_document' | 'dynamic' | 'pre_registered';

/** What registration finds of an upstream that needs OAuth (credential_meta: none of it is a secret). */
export interface OAuthSetup {
  meta: Record<string, string>;
  /** the client secret (dynamic registration's, or the tenant's), '' when the client is public */
  secret: string;
}

/** The upstream's row as this module reads it. */
export interface OAuthUpstream {
  name: string;
  url: string;
  credential_meta: Record<string, string>;
  key_id: string | null;
  sealed: SealedData | null;
}

/** The human has no connection to the upstream (never made, revoked, expired): they must connect. */
export class AuthorizationRequired extends Error {
  constructor(
    readonly upstream: string,
    readonly userId: string,
    message: string,
  ) {
    super(message);
    this.name = 'AuthorizationRequired';
  }
}

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
const grantAad = (tenantId: string, upstream: string, userId: string) => `agw:upstream-grant:v1|${tenantId}|${upstream}|${userId}`;
const pendingAad = (tenantId: string, upstream: string, stateSha: string) => `agw:upstream-oauth-pending:v1|${tenantId}|${upstream}|${stateSha}`;

export interface UpstreamOAuthDeps {
  keyring: Keyring;
  grants: OAuthGrantRepository;
  fetchOf(tenantId: string): EgressFetch;
  /** URL rules (scheme, no userinfo, https outside local): the URL or an Error */
  parseUrl(url: string): string;
  /** opens the upstream's sealed client secret */
  openClientSecret(tenantId: string, u: OAuthUpstream): Promise<string>;
  logger: Logger;
}

export class UpstreamOAuth {
  /** refreshes in flight, per connection: one refresh per grant at a time in this process */
  private readonly refreshing = new Map<string, Promise<string>>();

  constructor(private readonly d: UpstreamOAuthDeps) {}

  /**
   * Discovery and the gateway's identity at the upstream's authorization server. Field errors under
   * `credential.*` when the upstream names no usable server or no way to identify the gateway remains.
   */
  async prepare(tenantId: string, url: string, c: { client_id?: string; client_secret?: string; scope?: string; redirect_uri: string; client_metadata_url?: string }): Promise<OAuthSetup> {
    const fetchFn = this.d.fetchOf(tenantId);
    let info;
    try {
      info = await discoverOAuthServerInfo(url, { fetchFn });
    } catch (e) {
      throw InputError.at(['credential', 'type'], `the upstream's authorization server could not be discovered: ${(e as Error).message.slice(0, 200)}`, 'value_error');
    }
    const as = info.authorizationServerMetadata;
    if (!as) throw InputError.at(['credential', 'type'], `the upstream names authorization server ${info.authorizationServerUrl}, which publishes no metadata (RFC 8414 or OpenID discovery)`, 'value_error');
    for (const endpoint of [as.authorization_endpoint, as.token_endpoint]) {
      try {
        this.d.parseUrl(endpoint);
      } catch (e) {
        throw InputError.at(['credential', 'type'], `the authorization server's endpoint ${endpoint} is refused: ${(e as Error).message}`, 'value_error');
      }
    }
    if (!(as.code_challenge_methods_supported ?? []).includes('S256')) {
      throw InputError.at(['credential', 'type'], 'the authorization server does not offer PKCE S256 (code_challenge_methods_supported), which MCP requires', 'value_error');
    }
    // RFC 8707: the resource the metadata names when it covers the upstream's URL, else the canonical URL
    const canonical = resourceUrlFromServerUrl(url);
    const named = info.resourceMetadata?.resource;
    if (named && !checkResourceAllowed({ requestedResource: canonical, configuredResource: named })) {
      throw InputError.at(['url'], `the upstream's protected-resource metadata names resource ${named}, which does not cover ${canonical.href}`, 'value_error');
    }
    const resource = named ?? canonical.href;
    const scope = c.scope ?? info.resourceMetadata?.scopes_supported?.join(' ') ?? as.scopes_supported?.join(' ') ?? '';
    const base = {
      authorization_server: info.authorizationServerUrl,
      as_metadata: JSON.stringify(as),
      resource,
      redirect_uri: c.redirect_uri,
      ...(scope ? { scope } : {}),
    };
    if (c.client_id) {
      return { meta: { ...base, client_registration: 'pre_registered', client_id: c.client_id, ...(c.client_secret ? { token_endpoint_auth_method: 'client_secret_basic' } : { token_endpoint_auth_method: 'none' }) }, secret: c.client_secret ?? '' };
    }
    if (as.client_id_metadata_document_supported && c.client_metadata_url?.startsWith('https://')) {
      return { meta: { ...base, client_registration: 'metadata_document', client_id: c.client_metadata_url, token_endpoint_auth_method: 'none' }, secret: '' };
    }
    if (!as.registration_endpoint) {
      throw InputError.at(
        ['credential', 'client_id'],
        'the authorization server offers neither Client ID Metadata Documents (with an HTTPS gateway URL) nor dynamic registration: register the gateway there (redirect URI ' + c.redirect_uri + ') and give client_id (and client_secret)',
        'missing',
      );
    }
    let client;
    try {
      client = await registerClient(info.authorizationServerUrl, {
        metadata: as,
        clientMetadata: {
          redirect_uris: [c.redirect_uri],
          client_name: 'Agent Governance Gateway',
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          token_endpoint_auth_method: (as.token_endpoint_auth_methods_supported ?? ['client_secret_basic']).includes('client_secret_basic') ? 'client_secret_basic' : 'none',
          ...(scope ? { scope } : {}),
        },
        fetchFn,
      });
    } catch (e) {
      throw InputError.at(['credential', 'type'], `dynamic client registration at ${info.authorizationServerUrl} failed: ${(e as Error).message.slice(0, 200)}`, 'value_error');
    }
    return {
      meta: { ...base, client_registration: 'dynamic', client_id: client.client_id, token_endpoint_auth_method: client.token_endpoint_auth_method ?? (client.client_secret ? 'client_secret_basic' : 'none') },
      secret: client.client_secret ?? '',
    };
  }

  /** A new authorization for `userId` ('' for the shared connection), started by `humanId`. */
  async start(tenantId: string, u: OAuthUpstream, userId: string, humanId: string, bindingSha256: string): Promise<{ authorization_url: string; expires_at: Date }> {
    if (!/^[0-9a-f]{64}$/.test(bindingSha256)) throw InputError.field('binding_sha256', 'binding_sha256 is 64 hex characters');
    const m = u.credential_meta;
    const state = randomBytes(32).toString('base64url');
    const stateSha = sha256(state);
    const { authorizationUrl, codeVerifier } = await startAuthorization(m.authorization_server, {
      ...(await this.server(tenantId, u)),
      redirectUrl: m.redirect_uri,
      scope: m.scope || undefined,
      state,
    });
    const keyId = credentialsKeyId(tenantId);
    await this.d.keyring.ensure(tenantId, keyId, 'credentials');
    const sealed = await this.d.keyring.seal(keyId, Buffer.from(codeVerifier, 'utf8'), pendingAad(tenantId, u.name, stateSha));
    const expires_at = new Date(Date.now() + PENDING_TTL_MS);
    await this.d.grants.addPending({
      state_sha256: stateSha,
      tenant_id: tenantId,
      upstream: u.name,
      user_id: userId,
      requested_by: humanId,
      binding_sha256: bindingSha256,
      redirect_uri: m.redirect_uri,
      key_id: keyId,
      sealed: sealed as unknown as Record<string, string>,
      expires_at,
    });
    return { authorization_url: authorizationUrl.href, expires_at };
  }

  /**
   * The authorization server's redirect back. The state is consumed first (a replay finds nothing), then
   * checked: unexpired, and sent by the browser that started it. 401 otherwise.
   */
  async complete(
    p: { state: string; code: string; bindingSha256: string; error?: string },
    upstreamOf: (tenantId: string, name: string) => Promise<OAuthUpstream | undefined>,
  ): Promise<{ tenantId: string; upstream: string; userId: string }> {
    const pending = p.state ? await this.d.grants.takePending(sha256(p.state)) : undefined;
    const refused = (why: string) => new AuthenticationError(`The authorization could not be completed: ${why}; start it again from the console (Connect)`);
    if (!pending) throw refused('unknown or already used state');
    if (pending.expires_at.getTime() < Date.now()) throw refused('the authorization took longer than ten minutes');
    const a = Buffer.from(pending.binding_sha256, 'hex');
    const b = Buffer.from(/^[0-9a-f]{64}$/.test(p.bindingSha256) ? p.bindingSha256 : '', 'hex');
    if (a.length !== b.length || !timingSafeEqual(a, b)) throw refused('this browser did not start it (the binding cookie is missing or another)');
    if (p.error) throw refused(`the authorization server answered ${p.error.replace(/[^A-Za-z0-9_.-]/g, '').slice(0, 64)}`);
    if (!p.code) throw refused('no code came back');
    const tenantId = pending.tenant_id;
    const u = await upstreamOf(tenantId, pending.upstream);
    if (!u?.credential_meta.authorization_server) throw refused(`upstream ${pending.upstream} is no longer registered`);
    const codeVerifier = (await this.d.keyring.open(pending.key_id, pending.sealed as unknown as SealedData, pendingAad(tenantId, pending.upstream, pending.state_sha256))).toString('utf8');
    const m = u.credential_meta;
    let tokens: OAuthTokens;
    try {
      tokens = await exchangeAuthorization(m.authorization_server, {
        ...(await this.server(tenantId, u)),
        authorizationCode: p.code,
        codeVerifier,
        redirectUri: pending.redirect_uri,
        fetchFn: this.d.fetchOf(tenantId),
      });
    } catch (e) {
      throw refused(`the code exchange failed (${oauthCode(e)})`);
    }
    await this.store(tenantId, u.name, pending.user_id, tokens, pending.requested_by);
    return { tenantId, upstream: u.name, userId: pending.user_id };
  }

  /** The access token of a connection, refreshed when it expires within a minute; AuthorizationRequired when there is none. */
  async accessToken(tenantId: string, u: OAuthUpstream, userId: string, force = false): Promise<string> {
    const row = await this.d.grants.grant(tenantId, u.name, userId);
    if (!row) throw new AuthorizationRequired(u.name, userId, missing(u.name, userId));
    const tokens = await this.openGrant(tenantId, row);
    const due = force || (row.expires_at !== null && row.expires_at.getTime() - REFRESH_MARGIN_MS < Date.now());
    if (!due) return tokens.access_token;
    if (!tokens.refresh_token) {
      if (row.expires_at && row.expires_at.getTime() < Date.now()) throw await this.revoked(tenantId, u.name, userId, 'the access token expired and the server gave no refresh token');
      return tokens.access_token;
    }
    const key = `${tenantId}|${u.name}|${userId}`;
    let running = this.refreshing.get(key);
    if (!running) {
      running = this.refresh(tenantId, u, row, tokens).finally(() => this.refreshing.delete(key));
      this.refreshing.set(key, running);
    }
    return running;
  }

  async hasConnection(tenantId: string, upstream: string, userId: string): Promise<boolean> {
    return (await this.d.grants.grant(tenantId, upstream, userId)) !== undefined;
  }

  /** A human connected to a per_user upstream (to read its tools with), or undefined. */
  async anyConnection(tenantId: string, upstream: string): Promise<string | undefined> {
    return (await this.d.grants.list(tenantId, upstream)).find((g) => g.user_id !== '')?.user_id;
  }

  connections(tenantId: string, upstream: string) {
    return this.d.grants.list(tenantId, upstream);
  }

  /** The secrets a connection holds now (masked in what the upstream sends back). */
  async secretsOf(tenantId: string, upstream: string, userId: string): Promise<string[]> {
    const row = await this.d.grants.grant(tenantId, upstream, userId);
    if (!row) return [];
    const t = await this.openGrant(tenantId, row);
    return [t.access_token, ...(t.refresh_token ? [t.refresh_token] : [])];
  }

  /** The upstream refused the connection's token: the connection is gone; the caller records it. */
  async revoked(tenantId: string, upstream: string, userId: string, why: string): Promise<AuthorizationRequired> {
    await this.d.grants.remove(tenantId, upstream, userId);
    return new AuthorizationRequired(upstream, userId, `${missing(upstream, userId)} (${why})`);
  }

  /** Revokes the connection's tokens at the server (RFC 7009) where it offers revocation, then deletes it. */
  async disconnect(tenantId: string, u: OAuthUpstream, userId: string): Promise<{ removed: boolean; revoked: boolean }> {
    const row = await this.d.grants.remove(tenantId, u.name, userId);
    if (!row) return { removed: false, revoked: false };
    const as = JSON.parse(u.credential_meta.as_metadata ?? '{}') as { revocation_endpoint?: string };
    if (!as.revocation_endpoint) return { removed: true, revoked: false };
    const tokens = await this.openGrant(tenantId, row);
    const client = await this.client(tenantId, u);
    let revoked = true;
    for (const [token, hint] of [
      [tokens.refresh_token, 'refresh_token'],
      [tokens.access_token, 'access_token'],
    ] as const) {
      if (!token) continue;
      const body = new URLSearchParams({ token, token_type_hint: hint });
      const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
      if (client.client_secret) headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(client.client_id)}:${encodeURIComponent(client.client_secret)}`).toString('base64')}`;
      else body.set('client_id', client.client_id);
      try {
        const res = await this.d.fetchOf(tenantId)(as.revocation_endpoint, { method: 'POST', headers, body, signal: AbortSignal.timeout(10_000) });
        await res.body?.cancel().catch(() => undefined);
        if (!res.ok) revoked = false;
      } catch {
        revoked = false;
      }
    }
    if (!revoked) this.d.logger.warn({ tenantId, upstream: u.name }, 'the upstream authorization server did not confirm the revocation; the connection is deleted here');
    return { removed: true, revoked };
  }

  private async refresh(tenantId: string, u: OAuthUpstream, row: GrantRow, tokens: { access_token: string; refresh_token?: string }): Promise<string> {
    const m = u.credential_meta;
    let next: OAuthTokens;
    try {
      next = await refreshAuthorization(m.authorization_server, {
        ...(await this.server(tenantId, u)),
        refreshToken: tokens.refresh_token as string,
        fetchFn: this.d.fetchOf(tenantId),
      });
    } catch (e) {
      const code = oauthCode(e);
      if (code === 'invalid_grant' || code === 'unauthorized_client' || code === 'invalid_client') throw await this.revoked(tenantId, u.name, row.user_id, `the refresh was refused: ${code}`);
      // the server is down or answered something else: the current token is used while it lasts
      this.d.logger.warn({ tenantId, upstream: u.name, reason: code }, 'refreshing an upstream token failed');
      return tokens.access_token;
    }
    const sealed = await this.seal(tenantId, u.name, row.user_id, next);
    const written = await this.d.grants.rotate(tenantId, u.name, row.user_id, row.sealed, { sealed, expires_at: expiry(next), scope: next.scope ?? row.scope });
    if (!written) {
      // another replica refreshed first (or the connection was removed): use what is stored now
      const now = await this.d.grants.grant(tenantId, u.name, row.user_id);
      if (!now) throw new AuthorizationRequired(u.name, row.user_id, missing(u.name, row.user_id));
      return (await this.openGrant(tenantId, now)).access_token;
    }
    return next.access_token;
  }

  private async store(tenantId: string, upstream: string, userId: string, tokens: OAuthTokens, by: string): Promise<void> {
    const sealed = await this.seal(tenantId, upstream, userId, tokens);
    await this.d.grants.save(tenantId, {
      upstream,
      user_id: userId,
      key_id: credentialsKeyId(tenantId),
      sealed,
      scope: tokens.scope ?? null,
      expires_at: expiry(tokens),
      connected_by: by,
      connected_at: new Date(),
      refreshed_at: null,
    });
  }

  private async seal(tenantId: string, upstream: string, userId: string, t: OAuthTokens): Promise<Record<string, string>> {
    const keyId = credentialsKeyId(tenantId);
    await this.d.keyring.ensure(tenantId, keyId, 'credentials');
    const text = JSON.stringify({ access_token: t.access_token, ...(t.refresh_token ? { refresh_token: t.refresh_token } : {}) });
    return (await this.d.keyring.seal(keyId, Buffer.from(text, 'utf8'), grantAad(tenantId, upstream, userId))) as unknown as Record<string, string>;
  }

  private async openGrant(tenantId: string, row: GrantRow): Promise<{ access_token: string; refresh_token?: string }> {
    return JSON.parse((await this.d.keyring.open(row.key_id, row.sealed as unknown as SealedData, grantAad(tenantId, row.upstream, row.user_id))).toString('utf8'));
  }

  /** What every authorization call of the SDK takes of an upstream: its server's metadata, our client there, the resource (RFC 8707). */
  private async server(tenantId: string, u: OAuthUpstream): Promise<{ metadata: AuthorizationServerMetadata; clientInformation: OAuthClientInformationMixed; resource: URL }> {
    const m = u.credential_meta;
    return { metadata: JSON.parse(m.as_metadata) as AuthorizationServerMetadata, clientInformation: await this.client(tenantId, u), resource: new URL(m.resource) };
  }

  private async client(tenantId: string, u: OAuthUpstream): Promise<OAuthClientInformationMixed> {
    const m = u.credential_meta;
    const secret = u.key_id && u.sealed ? await this.d.openClientSecret(tenantId, u) : '';
    return { client_id: m.client_id, ...(secret ? { client_secret: secret } : {}), ...(m.token_endpoint_auth_method ? { token_endpoint_auth_method: m.token_endpoint_auth_method } : {}) } as OAuthClientInformationMixed;
  }
}

function missing(upstream: string, userId: string): string {
  const where = `Connect on the console's Tools page, POST /api/upstreams/${upstream}/connect`;
  return userId
    ? `upstream_authorization_required: upstream ${upstream} is connected per user and this human has not connected their account (${where})`
    : `upstream_authorization_required: upstream ${upstream} needs a human to connect it (${where})`;
}

function expiry(t: OAuthTokens): Date | null {
  return typeof t.expires_in === 'number' && t.expires_in > 0 ? new Date(Date.now() + t.expires_in * 1000) : null;
}

/** The OAuth error code of a failed token request (the SDK's OAuthError), never its description. */
function oauthCode(e: unknown): string {
  const code = (e as { errorCode?: unknown })?.errorCode;
  return typeof code === 'string' ? code.replace(/[^A-Za-z0-9_.-]/g, '').slice(0, 64) : 'request_failed';
}
