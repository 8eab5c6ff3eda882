/**
 * An upstream's credential (docs/federation.md, "Credentials"): validated at registration, its secret part
 * sealed by the tenant's credentials key inside the HSM (AAD `agw:upstream:v1|<tenant>|<upstream>`), opened
 * only here when a request to the upstream needs it, never returned, never logged.
 *
 * - `bearer`: `Authorization: Bearer <value>`;
 * - `header`: `<header_name>: <value>` (an API key header, say);
 * - `oauth_client_credentials`: an access token from `token_url` (RFC 6749 §4.4, client_secret_basic),
 *   kept in memory until shortly before it expires and fetched again after a 401. The token endpoint is
 *   named by the operator, so no discovery is needed (the SDK's ClientCredentialsProvider discovers it from
 *   the upstream's metadata, which not every upstream publishes); the request goes through the same egress
 *   rule as the upstream itself.
 */
import { InputError } from '@agw/shared';
import { type Keyring, credentialsKeyId } from '../keys/keyring';
import type { SealedData } from '../hsm/hsm-backend';
import { SecretMasker } from '../secrets/secret-masker';

export const UPSTREAM_CREDENTIAL_TYPES = ['bearer', 'header', 'oauth_client_credentials'] as const;
export type UpstreamCredentialType = (typeof UPSTREAM_CREDENTIAL_TYPES)[number];

export interface CredentialInput {
  type: string;
  value?: string;
  header_name?: string;
  token_url?: string;
  client_id?: string;
  client_secret?: string;
  scope?: string;
}

/** A validated credential: its type, what of it is no secret, and the secret to seal. */
export interface ValidatedCredential {
  type: UpstreamCredentialType;
  meta: Record<string, string>;
  secret: string;
}

const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,128}$/;
/** headers the transport owns: a credential may not replace them */
const RESERVED_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'cookie', 'content-type', 'accept', 'mcp-session-id', 'mcp-protocol-version', 'last-event-id']);

const field = (name: string, msg: string, type = 'value_error') => InputError.at(['credential', name], msg, type);

function secretText(v: string | undefined, name: string): string {
  if (!v) throw field(name, `${name} is required`, 'missing');
  if (v.length > 8192) throw field(name, `${name} is at most 8,192 characters`, 'string_too_long');
  if (/[\r\n\0]/.test(v)) throw field(name, `${name} must not contain line breaks or NUL`);
  return v;
}

/** Validates a credential input (field errors under `credential.*`); `parseUrl` checks the token URL's target rules. */
export function validateCredential(c: CredentialInput, parseUrl: (url: string) => string): ValidatedCredential {
  if (!(UPSTREAM_CREDENTIAL_TYPES as readonly string[]).includes(c.type)) throw field('type', `type must be one of ${UPSTREAM_CREDENTIAL_TYPES.join(', ')}`, 'enum');
  const type = c.type as UpstreamCredentialType;
  if (type === 'bearer') return { type, meta: {}, secret: secretText(c.value, 'value') };
  if (type === 'header') {
    const name = c.header_name ?? '';
    if (!HEADER_NAME.test(name) || RESERVED_HEADERS.has(name.toLowerCase())) throw field('header_name', 'header_name must be an HTTP header name the MCP transport does not own (not Host, Cookie, Content-*, Accept, Mcp-*)');
    return { type, meta: { header_name: name }, secret: secretText(c.value, 'value') };
  }
  if (!c.client_id || c.client_id.length > 512 || /[\r\n\0]/.test(c.client_id)) throw field('client_id', 'client_id is 1-512 characters without line breaks', 'missing');
  if (c.scope !== undefined && (c.scope.length > 1024 || !/^[\x21\x23-\x5B\x5D-\x7E ]*$/.test(c.scope))) throw field('scope', 'scope is a space-separated list of scope tokens (RFC 6749 §3.3)');
  let tokenUrl: string;
  try {
    tokenUrl = parseUrl(c.token_url ?? '');
  } catch (e) {
    throw field('token_url', (e as Error).message);
  }
  return { type, meta: { token_url: tokenUrl, client_id: c.client_id, ...(c.scope ? { scope: c.scope } : {}) }, secret: secretText(c.client_secret, 'client_secret') };
}

const aad = (tenantId: string, upstream: string) => `agw:upstream:v1|${tenantId}|${upstream}`;

/** A fetch that goes through the egress rule (the connector's). */
export type EgressFetch = (url: string | URL, init?: RequestInit) => Promise<Response>;

export class UpstreamCredentials {
  /** access tokens by `<tenant>|<upstream>|<created_at>` (a re-registered upstream never reuses one) */
  private readonly tokens = new Map<string, { token: string; expiresAt: number }>();

  constructor(
    private readonly keyring: Keyring,
    /** the egress fetch of a tenant (its own address rule) */
    private readonly fetchOf: (tenantId: string) => EgressFetch,
    private readonly timeoutMs = 10_000,
  ) {}

  async seal(tenantId: string, upstream: string, secret: string): Promise<{ key_id: string; sealed: SealedData }> {
    const keyId = credentialsKeyId(tenantId);
    await this.keyring.ensure(tenantId, keyId, 'credentials');
    return { key_id: keyId, sealed: await this.keyring.seal(keyId, Buffer.from(secret, 'utf8'), aad(tenantId, upstream)) };
  }

  async open(tenantId: string, upstream: string, keyId: string, sealed: SealedData): Promise<string> {
    return (await this.keyring.open(keyId, sealed, aad(tenantId, upstream))).toString('utf8');
  }

  /**
   * The headers that carry the credential on a request to the upstream, and the secret forms to mask in
   * anything the upstream sends back.
   */
  async headers(
    tenantId: string,
    u: { name: string; credential_type: string; credential_meta: Record<string, string>; key_id: string | null; sealed: SealedData | null; version: string },
  ): Promise<{ headers: Record<string, string>; secrets: string[] }> {
    if (u.credential_type === 'none' || !u.key_id || !u.sealed) return { headers: {}, secrets: [] };
    const secret = await this.open(tenantId, u.name, u.key_id, u.sealed);
    if (u.credential_type === 'bearer') return { headers: { authorization: `Bearer ${secret}` }, secrets: [secret] };
    if (u.credential_type === 'header') return { headers: { [u.credential_meta.header_name.toLowerCase()]: secret }, secrets: [secret] };
    const token = await this.accessToken(tenantId, u, secret);
    return { headers: { authorization: `Bearer ${token}` }, secrets: [secret, token] };
  }

  /** Forget a cached access token (the upstream answered 401 with it). */
  forgetToken(tenantId: string, u: { name: string; version: string }): void {
    this.tokens.delete(`${tenantId}|${u.name}|${u.version}`);
  }

  private async accessToken(tenantId: string, u: { name: string; credential_meta: Record<string, string>; version: string }, clientSecret: string): Promise<string> {
    const key = `${tenantId}|${u.name}|${u.version}`;
    const cached = this.tokens.get(key);
    if (cached && cached.expiresAt > Date.now()) return cached.token;
    const { token_url: tokenUrl, client_id: clientId, scope } = u.credential_meta;
    const body = new URLSearchParams({ grant_type: 'client_credentials', ...(scope ? { scope } : {}) });
    const basic = Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64');
    let res: Response;
    try {
      res = await this.fetchOf(tenantId)(tokenUrl, {
        method: 'POST',
        headers: { authorization: `Basic ${basic}`, accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' },
        body,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (e) {
      throw new UpstreamAuthError(`token endpoint unreachable: ${(e as Error).message}`);
    }
    const text = (await res.text()).slice(0, 65_536);
    let parsed: { access_token?: unknown; expires_in?: unknown; error?: unknown } = {};
    try {
      parsed = JSON.parse(text);
    } catch {
      // reported below
    }
    if (!res.ok || typeof parsed.access_token !== 'string' || !parsed.access_token) {
      // the endpoint's error code only, clipped, and never an echo of the client's secret
      const code = typeof parsed.error === 'string' ? new SecretMasker([clientSecret]).text(parsed.error.slice(0, 64)) : '';
      throw new UpstreamAuthError(`token endpoint answered ${res.status}${code ? ` (${code})` : ''}`);
    }
    const lifetime = typeof parsed.expires_in === 'number' && parsed.expires_in > 0 ? parsed.expires_in : 300;
    // refreshed 30 s (or a tenth of a short lifetime) before it expires
    this.tokens.set(key, { token: parsed.access_token, expiresAt: Date.now() + Math.max(1, lifetime - Math.min(30, lifetime / 10)) * 1000 });
    if (this.tokens.size > 10_000) this.tokens.delete(this.tokens.keys().next().value as string);
    return parsed.access_token;
  }
}

/** The upstream's credential could not be used (token endpoint refused or unreachable). */
export class UpstreamAuthError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UpstreamAuthError';
  }
}
