/**
 * Single sign-on with a tenant's OpenID Connect provider (docs/auth.md, "Single sign-on (OIDC)").
 *
 * Configuration (owners and admins): one provider per tenant, its client secret sealed by the vault
 * (purpose `sso_client_secret`, the tenant's HSM-held credentials key), never logged or returned; its e-mail
 * domains bound to this tenant only.
 *
 * Sign-in: `start` resolves the tenant (slug, e-mail or domain), discovers the provider (openid-client),
 * and redirects to its authorization endpoint with the authorization code flow, PKCE (S256), a `state` and a
 * `nonce`, kept single-use and bound to the browser by sso-state.ts. `finish` takes the state back, has
 * openid-client exchange the code and validate the id_token (signature, issuer, audience, nonce, expiry, and
 * the `iss` of the authorization response), requires `email_verified: true` and an address of a bound
 * domain, then signs in the member with that address or creates it (just-in-time) with the group-mapped or
 * default role. One account per e-mail across the deployment, as for every sign-in.
 */
import { randomUUID } from 'node:crypto';
import type { vault as pb } from '@agw/proto';
import { ConflictError, type Db, type Logger, NotFoundError, controlPlaneRecord, openSecretRequest, sealedSecretText, toAuditEntry } from '@agw/shared';
import type { AuditClient } from '../clients/grpc-clients';
import { type SsoConfigInput, type SsoRole, domainOf, parseTenantHint, roleForGroups } from './sso-config';
import { type SsoPending, SsoStateStore } from './sso-state';

type OidcClient = typeof import('openid-client');

export interface SsoSecretSealer {
  seal(tenantId: string, plaintext: string): Promise<string>;
  open(tenantId: string, sealedJson: string): Promise<string>;
}

/** The configuration as GET /api/settings/sso shows it (the secret never). */
export interface SsoConfigView {
  issuer: string;
  client_id: string;
  client_secret_set: true;
  domains: string[];
  default_role: SsoRole;
  groups_claim: string | null;
  group_roles: Record<string, SsoRole>;
  require_sso: boolean;
  redirect_uri: string;
  updated_by: string;
  updated_at: string;
}

/** A refusal of the sign-in: the HTTP status, a stable code and the precise reason. */
export class SsoRefusal extends Error {
  constructor(
    readonly status: 400 | 401 | 403 | 409 | 502,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

interface StoredConfig {
  tenant_id: string;
  issuer: string;
  client_id: string;
  client_secret_sealed: string;
  default_role: SsoRole;
  groups_claim: string | null;
  group_roles: Record<string, SsoRole>;
  require_sso: boolean;
  updated_by: string;
  updated_at: Date;
}

const SCOPE = 'openid email profile';
const DISCOVERY_CACHE_MS = 10 * 60_000;

export class SsoService {
  private oidc?: Promise<OidcClient>;
  private readonly discovered = new Map<string, { at: number; config: Promise<import('openid-client').Configuration> }>();

  constructor(
    private readonly db: Db,
    readonly states: SsoStateStore,
    private readonly sealer: SsoSecretSealer,
    private readonly audit: Pick<AuditClient, 'append'> | undefined,
    private readonly o: { publicBaseUrl: string; logger: Logger; discoveryTimeoutSeconds?: number },
  ) {}

  /** openid-client is an ES module: loaded once, on first use. */
  private client(): Promise<OidcClient> {
    this.oidc ??= import('openid-client');
    return this.oidc;
  }

  get redirectUri(): string {
    return `${this.o.publicBaseUrl.replace(/\/+$/, '')}/auth/sso/callback`;
  }

  /** Where a signed-in browser goes: the console. */
  get consoleUrl(): string {
    return `${new URL(this.o.publicBaseUrl).origin}/`;
  }

  private async stored(tenantId: string): Promise<StoredConfig | undefined> {
    const row = await this.db.selectFrom('tenant_sso').selectAll().where('tenant_id', '=', tenantId).executeTakeFirst();
    return row ? { ...row, group_roles: row.group_roles as Record<string, SsoRole>, updated_at: new Date(row.updated_at) } : undefined;
  }

  private async domainsOf(tenantId: string): Promise<string[]> {
    return (await this.db.selectFrom('tenant_sso_domains').select('domain').where('tenant_id', '=', tenantId).orderBy('domain').execute()).map((r) => r.domain);
  }

  async view(tenantId: string): Promise<SsoConfigView> {
    const c = await this.stored(tenantId);
    if (!c) throw new NotFoundError('Single sign-on is not configured for this tenant: PUT /api/settings/sso configures it');
    return this.present(c, await this.domainsOf(tenantId));
  }

  private present(c: StoredConfig, domains: string[]): SsoConfigView {
    return {
      issuer: c.issuer,
      client_id: c.client_id,
      client_secret_set: true,
      domains,
      default_role: c.default_role,
      groups_claim: c.groups_claim,
      group_roles: c.group_roles,
      require_sso: c.require_sso,
      redirect_uri: this.redirectUri,
      updated_by: c.updated_by,
      updated_at: c.updated_at.toISOString(),
    };
  }

  /** Whether the tenant refuses password (and GitHub) sign-in for its members. */
  async requiresSso(tenantId: string): Promise<boolean> {
    const r = await this.db.selectFrom('tenant_sso').select('require_sso').where('tenant_id', '=', tenantId).executeTakeFirst();
    return r?.require_sso === true;
  }

  async put(tenantId: string, input: SsoConfigInput, by: string): Promise<SsoConfigView> {
    const existing = await this.stored(tenantId);
    if (!existing && !input.client_secret) throw new ConflictError('client_secret is required when single sign-on is configured the first time');
    const sealed = input.client_secret ? await this.sealer.seal(tenantId, input.client_secret) : existing!.client_secret_sealed;
    const now = new Date();
    const row = {
      tenant_id: tenantId,
      issuer: input.issuer,
      client_id: input.client_id,
      client_secret_sealed: sealed,
      default_role: input.default_role,
      groups_claim: input.groups_claim ?? null,
      group_roles: JSON.stringify(input.group_roles),
      require_sso: input.require_sso,
      updated_by: by,
      updated_at: now,
    };
    await this.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('tenant_sso')
        .values({ ...row, created_at: now })
        .onConflict((oc) => oc.column('tenant_id').doUpdateSet(row))
        .execute();
      const taken = await trx.selectFrom('tenant_sso_domains').select(['domain', 'tenant_id']).where('domain', 'in', input.domains).where('tenant_id', '!=', tenantId).execute();
      if (taken.length) throw new ConflictError(`${taken.map((t) => t.domain).join(', ')} ${taken.length > 1 ? 'are' : 'is'} bound to another tenant's single sign-on: an e-mail domain belongs to one tenant`);
      await trx.deleteFrom('tenant_sso_domains').where('tenant_id', '=', tenantId).execute();
      try {
        await trx
          .insertInto('tenant_sso_domains')
          .values(input.domains.map((domain) => ({ domain, tenant_id: tenantId })))
          .execute();
      } catch (e) {
        if ((e as { code?: string }).code === '23505') throw new ConflictError('An e-mail domain of this configuration was bound to another tenant at the same moment: an e-mail domain belongs to one tenant');
        throw e;
      }
    });
    this.discovered.delete(tenantId);
    const view = this.present({ ...row, group_roles: input.group_roles, updated_at: now }, [...input.domains].sort());
    await this.record(tenantId, existing ? 'update' : 'create', by, {
      issuer: view.issuer,
      client_id: view.client_id,
      client_secret_changed: Boolean(input.client_secret),
      domains: view.domains,
      default_role: view.default_role,
      groups_claim: view.groups_claim,
      group_roles: view.group_roles,
      require_sso: view.require_sso,
    });
    return view;
  }

  async remove(tenantId: string, by: string): Promise<{ deleted: true }> {
    const r = await this.db.deleteFrom('tenant_sso').where('tenant_id', '=', tenantId).executeTakeFirst();
    if (Number(r.numDeletedRows) !== 1) throw new NotFoundError('Single sign-on is not configured for this tenant');
    this.discovered.delete(tenantId);
    await this.record(tenantId, 'delete', by, {});
    return { deleted: true };
  }

  /** A change of the configuration is evidence: a control_plane record in the tenant's chain (the secret never). */
  private async record(tenantId: string, method: 'create' | 'update' | 'delete', by: string, details: Record<string, unknown>): Promise<void> {
    if (!this.audit) return;
    const record = controlPlaneRecord(
      { action_id: randomUUID(), agent_id: 'control-plane', agent_type: 'control_plane', agent_version: '1', tool: 'agw.settings.sso', method, session_id: null, requested_at: new Date().toISOString() },
      { params: {}, decision: 'sso_configured', violations: [], severity: 'low', bundle_revision: 'control-plane', details: { setting: 'sso', change: method, changed_by: by, ...details } },
    );
    await this.audit.append({ tenant_id: tenantId, entry: toAuditEntry(record), event_kind: '', append_key: `sso:${record.action_id}` });
  }

  /** The tenant a sign-in names (slug, e-mail address or domain) and its configuration. */
  private async resolve(hint: string): Promise<{ config: StoredConfig; loginHint?: string }> {
    const h = parseTenantHint(hint);
    let tenantId: string | undefined;
    if ('domain' in h) {
      tenantId = (await this.db.selectFrom('tenant_sso_domains').select('tenant_id').where('domain', '=', h.domain).executeTakeFirst())?.tenant_id;
    } else {
      tenantId = (await this.db.selectFrom('tenants').select('id').where('slug', '=', h.slug).executeTakeFirst())?.id;
    }
    const config = tenantId ? await this.stored(tenantId) : undefined;
    if (!config) throw new NotFoundError(`No single sign-on is configured for "${hint}": give your work e-mail address, its domain, or your tenant's slug`);
    return { config, ...('email' in h && h.email ? { loginHint: h.email } : {}) };
  }

  private async discover(c: StoredConfig): Promise<import('openid-client').Configuration> {
    const key = `${c.tenant_id}|${c.updated_at.toISOString()}`;
    const hit = this.discovered.get(c.tenant_id);
    if (hit && hit.at > Date.now() - DISCOVERY_CACHE_MS && (hit as { key?: string }).key === key) return hit.config;
    const oidc = await this.client();
    const config = (async () => {
      const secret = await this.sealer.open(c.tenant_id, c.client_secret_sealed);
      const insecure = new URL(c.issuer).protocol === 'http:';
      return oidc.discovery(new URL(c.issuer), c.client_id, secret, oidc.ClientSecretPost(secret), {
        timeout: this.o.discoveryTimeoutSeconds ?? 10,
        ...(insecure ? { execute: [oidc.allowInsecureRequests] } : {}),
      });
    })();
    const entry = { at: Date.now(), config, key };
    this.discovered.set(c.tenant_id, entry);
    config.catch(() => {
      if (this.discovered.get(c.tenant_id) === entry) this.discovered.delete(c.tenant_id);
    });
    return config;
  }

  /** The provider's authorization URL for a new sign-in, and the cookie that binds it to this browser. */
  async start(hint: string): Promise<{ url: string; browserCookie: string }> {
    const { config: c, loginHint } = await this.resolve(hint);
    const oidc = await this.client();
    let configuration;
    try {
      configuration = await this.discover(c);
    } catch (e) {
      this.o.logger.warn({ tenantId: c.tenant_id, issuer: c.issuer, reason: e instanceof Error ? e.message : String(e) }, 'SSO discovery failed');
      throw new SsoRefusal(502, 'discovery_failed', `The identity provider's discovery document could not be used (${c.issuer}/.well-known/openid-configuration): ${e instanceof Error ? e.message : String(e)}`);
    }
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const binding = SsoStateStore.newBrowserBinding();
    const pending: SsoPending = { tenantId: c.tenant_id, codeVerifier, nonce, browserHash: binding.hash, configVersion: c.updated_at.toISOString(), createdAt: new Date().toISOString() };
    await this.states.save(state, pending);
    const url = oidc.buildAuthorizationUrl(configuration, {
      redirect_uri: this.redirectUri,
      scope: SCOPE,
      response_type: 'code',
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
      nonce,
      ...(loginHint ? { login_hint: loginHint } : {}),
    });
    return { url: url.href, browserCookie: binding.cookie };
  }

  /** The provider's redirect back: the member signed in (created at first sign-in). */
  async finish(callbackUrl: URL, browserCookie: string | undefined): Promise<{ tenantId: string; userId: string; email: string; created: boolean; role: string }> {
    const q = callbackUrl.searchParams;
    const state = q.get('state');
    if (!state) throw new SsoRefusal(400, 'missing_state', 'The callback carries no state: start the sign-in again at GET /api/auth/sso/start');
    const taken = await this.states.take(state, browserCookie);
    if (!taken.ok) {
      throw taken.reason === 'unknown_state'
        ? new SsoRefusal(400, 'unknown_state', 'Unknown or used state: a sign-in callback works once and within 10 minutes of its start; start the sign-in again')
        : new SsoRefusal(400, 'browser_mismatch', 'This sign-in was started in another browser (its SSO cookie is missing or different); start the sign-in again here');
    }
    const p = taken.pending;
    if (q.get('error')) throw new SsoRefusal(401, 'provider_error', `The identity provider refused the sign-in: ${q.get('error')}${q.get('error_description') ? ` (${q.get('error_description')})` : ''}`);
    const c = await this.stored(p.tenantId);
    if (!c) throw new SsoRefusal(400, 'not_configured', 'Single sign-on was removed from this tenant while the sign-in was under way');
    if (c.updated_at.toISOString() !== p.configVersion) throw new SsoRefusal(400, 'config_changed', 'The tenant\'s single sign-on configuration changed while the sign-in was under way; start the sign-in again');
    const oidc = await this.client();
    const configuration = await this.discover(c).catch((e: unknown) => {
      throw new SsoRefusal(502, 'discovery_failed', `The identity provider's discovery document could not be used: ${e instanceof Error ? e.message : String(e)}`);
    });
    let claims: Record<string, unknown>;
    try {
      // the callback URL as the provider built it: redirect_uri's origin and path, the query received
      const current = new URL(this.redirectUri);
      current.search = callbackUrl.search;
      const tokens = await oidc.authorizationCodeGrant(configuration, current, { pkceCodeVerifier: p.codeVerifier, expectedState: state, expectedNonce: p.nonce, idTokenExpected: true });
      claims = (tokens.claims() ?? {}) as Record<string, unknown>;
    } catch (e) {
      const reason = whyRefused(e);
      this.o.logger.warn({ tenantId: c.tenant_id, issuer: c.issuer, reason }, 'SSO sign-in refused');
      throw new SsoRefusal(401, 'token_rejected', `The identity provider's answer was refused: ${reason}`);
    }
    return this.signIn(c, claims);
  }

  private async signIn(c: StoredConfig, claims: Record<string, unknown>) {
    const email = typeof claims.email === 'string' ? claims.email.trim().toLowerCase() : '';
    if (!email) throw new SsoRefusal(403, 'no_email', 'The identity provider did not return an e-mail address (the email scope and claim are needed)');
    if (claims.email_verified !== true) throw new SsoRefusal(403, 'email_not_verified', `The identity provider does not assert that ${email} is verified (email_verified is not true)`);
    const domain = domainOf(email);
    const domains = await this.domainsOf(c.tenant_id);
    if (!domain || !domains.includes(domain)) throw new SsoRefusal(403, 'domain_not_bound', `${email} is not an address of a domain bound to this tenant's single sign-on (${domains.join(', ')})`);
    return this.db.transaction().execute(async (trx) => {
      // one account per e-mail across the deployment
      const user = await trx.selectFrom('users').select(['id', 'tenant_id', 'email', 'role']).where('email', '=', email).forUpdate().executeTakeFirst();
      if (user && user.tenant_id !== c.tenant_id) throw new SsoRefusal(409, 'account_elsewhere', `${email} has an account in another tenant: an e-mail address has one account, so it cannot sign in here`);
      if (user) {
        await trx.updateTable('users').set({ email_verified: true }).where('id', '=', user.id).where('email_verified', '=', false).execute();
        return { tenantId: c.tenant_id, userId: user.id, email, created: false, role: user.role };
      }
      const role = roleForGroups(c, claims);
      const userId = randomUUID();
      await trx.insertInto('users').values({ id: userId, tenant_id: c.tenant_id, email, password_hash: null, email_verified: true, is_admin: false, role }).execute();
      this.o.logger.info({ tenantId: c.tenant_id, userId, role }, 'member created at first SSO sign-in');
      return { tenantId: c.tenant_id, userId, email, created: true, role };
    });
  }
}

/**
 * Why openid-client refused an answer, precisely: its message, the cause's (oauth4webapi's check, e.g.
 * `unexpected "iss" (issuer) response parameter value`) and the provider's `error`/`error_description`.
 */
export function whyRefused(e: unknown): string {
  const parts: string[] = [];
  const seen = new Set<unknown>();
  for (let x: unknown = e; x && typeof x === 'object' && !seen.has(x); x = (x as { cause?: unknown }).cause) {
    seen.add(x);
    const o = x as { message?: unknown; error?: unknown; error_description?: unknown };
    if (typeof o.message === 'string' && o.message) parts.push(o.message);
    if (typeof o.error === 'string') parts.push(`${o.error}${typeof o.error_description === 'string' ? `: ${o.error_description}` : ''}`);
  }
  if (!parts.length) parts.push(String(e));
  return [...new Set(parts)].join(' (') + ')'.repeat(Math.max(0, [...new Set(parts)].length - 1));
}

/** The vault's SealSecret/OpenSecret for SSO client secrets. */
export function vaultSsoSecretSealer(vault: { sealSecret(r: pb.SealSecretRequest): Promise<pb.SealedSecret>; openSecret(r: pb.OpenSecretRequest): Promise<pb.OpenedSecret> }): SsoSecretSealer {
  return {
    seal: async (tenantId, plaintext) => sealedSecretText(await vault.sealSecret({ tenant_id: tenantId, purpose: 'sso_client_secret', plaintext })),
    open: async (tenantId, sealedJson) => (await vault.openSecret(openSecretRequest(tenantId, 'sso_client_secret', sealedJson))).plaintext,
  };
}

