/** Gateway settings (env validated once at start; defaults work on a developer machine). */
import { commonSettings, envBool, envCidrList, envInt, envPort, loadConfig, setting, storeSettings, opsListenSettings, peerUrlSetting } from '@agw/shared';
import { isIP } from 'node:net';
import { z } from 'zod';
import { parsePublicOrigins } from './oauth/public-origins';

/**
 * TRUST_PROXY as Express's `trust proxy` takes it, never "trust all": `false` (the socket's address is the
 * client's), a hop count (the client is the address that many appending proxies back from the socket, so
 * whatever the client wrote itself into X-Forwarded-For stays to the left and is never read), or the
 * proxies' addresses and ranges (the client is the right-most entry not inside them). `true` would make the
 * left-most entry, which the client writes, its address; it is refused at start.
 */
export type TrustProxy = false | number | string[];

const TRUST_ALL = ['true', 'yes', 'on', 'all', '*'];
const OFF = ['false', 'no', 'off', '0'];

/** Whether `s` is an IP address or a CIDR (`10.0.0.0/8`, `2001:db8::/32`). */
function isAddressOrCidr(s: string): boolean {
  const [addr, bits, extra] = s.split('/');
  const family = isIP(addr);
  if (!family || extra !== undefined) return false;
  if (bits === undefined) return true;
  return /^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128);
}

export const envTrustProxy = () =>
  z
    .string()
    .optional()
    .transform((v, ctx): TrustProxy => {
      const s = (v ?? '').trim().toLowerCase();
      if (!s || OFF.includes(s)) return false;
      if (TRUST_ALL.includes(s)) {
        ctx.addIssue({
          code: 'custom',
          message: `"${v}" would trust every hop, so a client's own X-Forwarded-For entry would become its address (and pass the per-IP limits and MCP_IP_ALLOWLIST); set the number of proxies in front of the gateway that append to X-Forwarded-For (1 behind one ingress) or their address ranges`,
        });
        return z.NEVER;
      }
      if (/^\d+$/.test(s)) {
        const hops = Number(s);
        if (hops > 10) {
          ctx.addIssue({ code: 'custom', message: `a hop count is 1-10, got ${hops}` });
          return z.NEVER;
        }
        return hops;
      }
      const ranges = s.split(',').map((r) => r.trim()).filter(Boolean);
      const bad = ranges.filter((r) => !isAddressOrCidr(r));
      if (bad.length) {
        ctx.addIssue({ code: 'custom', message: `expected false, a hop count or comma-separated CIDRs of the ingress, got ${bad.map((b) => `"${b}"`).join(', ')}` });
        return z.NEVER;
      }
      return ranges;
    });

export const gatewaySettings = {
  ...commonSettings,
  ...storeSettings,
  host: setting('GATEWAY_HOST', z.string().default('127.0.0.1'), 'public HTTP listen address'),
  port: setting('GATEWAY_PORT', envPort(8080), 'public HTTP port'),
  ...opsListenSettings('gateway'),
  headersTimeoutMs: setting('GATEWAY_HEADERS_TIMEOUT_MS', envInt(10_000), 'a request\'s headers must arrive within this (slow clients get a 408)'),
  requestTimeoutMs: setting('GATEWAY_REQUEST_TIMEOUT_MS', envInt(30_000), 'a whole request (headers and body) must arrive within this (408)'),
  keepAliveTimeoutMs: setting('GATEWAY_KEEP_ALIVE_TIMEOUT_MS', envInt(65_000), 'an idle keep-alive connection is closed after this (longer than a load balancer\'s 60 s)'),
  maxConnections: setting('GATEWAY_MAX_CONNECTIONS', envInt(4096), 'open connections at most; more are dropped on accept'),
  maxGovernedInFlight: setting('GATEWAY_MAX_IN_FLIGHT', envInt(256), 'ceiling of the governed calls (POST /api/mcp/tools/call and the MCP servers) this gateway process serves at once; more are shed with 503 and Retry-After before any work (0: no limit; docs/reliability.md, "Overload")'),
  targetLatencyMs: setting('GATEWAY_TARGET_LATENCY_MS', envInt(500), 'the gateway\'s own time per governed call above which its in-flight limit adapts down (AIMD, never below 32; 0: the limit stays at GATEWAY_MAX_IN_FLIGHT)'),
  maxGovernedInFlightPerTenant: setting('GATEWAY_MAX_IN_FLIGHT_PER_TENANT', envInt(128), 'governed calls one tenant may have in flight in this gateway process; more are shed with 503 (0: no limit)'),
  shutdownGraceMs: setting('GATEWAY_SHUTDOWN_GRACE_MS', envInt(20_000), 'on SIGTERM, how long requests in flight may take to finish before their connections are closed'),
  publicBaseUrl: setting('PUBLIC_BASE_URL', z.string().default('http://127.0.0.1:8080/api'), 'base URL clients use (printed, used in MCP server URLs)'),
  publicOrigins: setting(
    'PUBLIC_ORIGINS',
    z
      .string()
      .optional()
      .transform((v, ctx) => {
        if (v === undefined) return undefined;
        const r = parsePublicOrigins(v);
        if ('origins' in r) return r.origins;
        ctx.addIssue({ code: 'custom', message: r.problem });
        return z.NEVER;
      }),
    'origins (scheme://host[:port], comma-separated) at which clients reach the MCP server besides PUBLIC_BASE_URL\'s (always listed, first, and the answer to any other): its OAuth metadata, WWW-Authenticate challenge, issuer and token audience are those of the origin a request came to, and a token is good at the origin it was issued for only (docs/auth.md); unset: PUBLIC_BASE_URL\'s origin, and in the local profile its loopback twin too (http://127.0.0.1:8080 and http://localhost:8080)',
  ),
  policyGrpcUrl: peerUrlSetting('policy', 'policy service gRPC address'),
  auditGrpcUrl: peerUrlSetting('audit', 'audit service gRPC address'),
  vaultGrpcUrl: peerUrlSetting('vault', 'vault service gRPC address'),
  webhookGrpcUrl: peerUrlSetting('webhook', 'webhook service gRPC address'),
  anchorGrpcUrl: peerUrlSetting('anchor', 'anchor service gRPC address'),
  requireVerifiedEmail: setting('AUTH_REQUIRE_VERIFIED_EMAIL', envBool(false), 'password login only after the e-mail address is verified (always on in the production profile; locally the link is only logged)'),
  managedGrpcUrl: peerUrlSetting('managed', 'managed-session service gRPC address (/api/managed/*)'),
  policyDeadlineMs: setting('POLICY_DEADLINE_MS', envInt(2000), 'deadline of one policy evaluation before the failure mode applies'),
  auditDeadlineMs: setting('AUDIT_DEADLINE_MS', envInt(10_000), 'deadline of one audit call (append, log, verify)'),
  auditAppendRetryMs: setting('AUDIT_APPEND_RETRY_MS', envInt(15_000), 'how long an append that finds the audit service unreachable is sent again under the same idempotency key before the call fails (0: never); covers a restart of the audit service'),
  vaultDeadlineMs: setting('VAULT_DEADLINE_MS', envInt(10_000), 'deadline of one vault call (PII protection, brokered execution, credentials)'),
  merkleDeadlineMs: setting('MERKLE_DEADLINE_MS', envInt(60_000), 'deadline of Merkle calls and of the audit part of a compliance export (a triggered build may wait for a running one)'),
  exportPeerDeadlineMs: setting('EXPORT_PEER_DEADLINE_MS', envInt(10_000), 'deadline of the anchor and policy calls behind a compliance export (past it the section says unavailable)'),
  exportMaxBytes: setting('EXPORT_MAX_BYTES', envInt(12 * 1024 * 1024), 'largest compliance export document; fewer records are listed beyond it (summary.truncated)'),
  anchorDeadlineMs: setting('ANCHOR_DEADLINE_MS', envInt(120_000), 'deadline of anchor calls (a trigger waits for its transaction receipt)'),
  webhookDeadlineMs: setting('WEBHOOK_DEADLINE_MS', envInt(30_000), 'deadline of webhook-service calls (a test delivery waits for its first attempt)'),
  federationDeadlineMs: setting('FEDERATION_DEADLINE_MS', envInt(45_000), 'deadline of upstream registration and refresh (the vault connects and reads the upstream\'s tools)'),
  managedDeadlineMs: setting('MANAGED_DEADLINE_MS', envInt(60_000), 'deadline of managed-session calls (creating a session waits for the agent platform)'),
  approvalSweepMs: setting('APPROVAL_SWEEP_MS', envInt(30_000), 'how often queued actions past their approval_expiry_seconds are expired (0: never swept; a late decision still expires them)'),
  probeDeadlineMs: setting('HEALTH_PROBE_DEADLINE_MS', envInt(2000), 'deadline of the dependency probes behind GET /api/health and status reads'),
  jwtSecret: setting('JWT_SECRET', z.string().min(32).optional(), 'HS256 key of session tokens (required in production; a random one per process otherwise)'),
  jwtTtlSeconds: setting('JWT_TTL_SECONDS', envInt(3600), 'session token lifetime'),
  adminEmails: setting('ADMIN_EMAILS', z.string().default(''), 'comma-separated e-mails of administrators (POST/GET /tenants)'),
  defaultRateLimitRps: setting('DEFAULT_RATE_LIMIT_RPS', envInt(50), 'default sustained requests per second per tenant'),
  defaultRateLimitBurst: setting('DEFAULT_RATE_LIMIT_BURST', envInt(100), 'default burst per tenant (requests allowed in a burst/rps window)'),
  authRateLimitPerMinute: setting('AUTH_RATE_LIMIT_PER_MINUTE', envInt(30), 'signup/login attempts per client IP per minute'),
  publicRateLimitPerMinute: setting('PUBLIC_RATE_LIMIT_PER_MINUTE', envInt(60), 'requests to the public dashboard and transparency endpoints per client IP per minute'),
  publicCacheSeconds: setting('PUBLIC_CACHE_SECONDS', envInt(30), 'how long a public dashboard aggregate (counts, chain verification) is cached'),
  trustProxy: setting(
    'TRUST_PROXY',
    envTrustProxy(),
    'which hops in front of the gateway may name the client in X-Forwarded-For: off (false), a hop count (1 behind one ingress that appends the address it saw) or the ingress\'s address ranges (comma-separated CIDRs); "true" (trust every hop) is refused, since the client\'s own left-most entry would become its address (docs/operations.md, "Client addresses behind an ingress")',
  ),
  backupDir: setting('BACKUP_DIR', z.string().default('.run/backups'), 'where POST /api/backup/trigger writes backups (a volume of its own in production; relative to the working directory)'),
  backupTimeoutMs: setting('BACKUP_TIMEOUT_MS', envInt(600_000), 'longest one backup may take before pg_dump/psql are stopped'),
  mcpIpAllowlist: setting('MCP_IP_ALLOWLIST', z.string().default(''), 'comma-separated source IPs/CIDRs allowed to use /api/mcp/server (empty: any authenticated caller)'),
  mcpApprovalHoldMs: setting('MCP_APPROVAL_HOLD_MS', envInt(5000), 'how long an MCP client\'s retry of a queued call (revision 2026-07-28 requestState) is held for a human\'s decision before input_required is answered again (0: answer at once)'),
  mcpAllowedOrigins: setting('MCP_ALLOWED_ORIGINS', z.string().default(''), 'browser origins (scheme://host[:port], comma-separated) allowed to call the MCP endpoints besides the gateway\'s own (PUBLIC_BASE_URL; the local profile also allows loopback origins); requests without Origin pass'),
  metricsBearerToken: setting('METRICS_BEARER_TOKEN', z.string().min(16).optional(), 'when set, /api/metrics answers only with this bearer token; in production without it /api/metrics is absent (scrape GATEWAY_OPS_PORT)'),
  oauthClientMetadataCaFile: setting('OAUTH_CLIENT_METADATA_CA_FILE', z.string().optional(), 'PEM file of extra CA certificates trusted when fetching MCP clients\' metadata documents (re-read when it changes)'),
  oauthClientMetadataAllowCidrs: setting('OAUTH_CLIENT_METADATA_ALLOW_CIDRS', envCidrList, 'address ranges besides public ones where MCP clients\' metadata documents may be fetched, comma-separated CIDRs (default: loopback in the local profile, none in production)'),
  oauthGrantMaxAgeDays: setting('OAUTH_GRANT_MAX_AGE_DAYS', z.coerce.number().int().min(1).max(3650).default(90), 'an MCP client\'s OAuth grant ends this many days after the consent (no token outlives it; the client must ask for consent again)'),
  oauthPurgeIntervalMs: setting('OAUTH_PURGE_INTERVAL_MS', envInt(600_000), 'how often one gateway replica purges expired OAuth requests, codes, tokens and unused registered clients (0: never)'),
  githubClientId: setting('GITHUB_CLIENT_ID', z.string().optional(), 'OAuth app client id; GitHub login (/auth/github) is off while unset'),
  githubClientSecret: setting('GITHUB_CLIENT_SECRET', z.string().optional(), 'OAuth app client secret (from a secret store)'),
  githubAuthorizationUrl: setting('GITHUB_AUTHORIZATION_URL', z.url().default('https://github.com/login/oauth/authorize'), 'GitHub authorization endpoint'),
  githubTokenUrl: setting('GITHUB_TOKEN_URL', z.url().default('https://github.com/login/oauth/access_token'), 'GitHub token endpoint'),
  githubUserProfileUrl: setting('GITHUB_USER_PROFILE_URL', z.url().default('https://api.github.com/user'), 'GitHub user API'),
  githubUserEmailUrl: setting('GITHUB_USER_EMAIL_URL', z.url().default('https://api.github.com/user/emails'), 'GitHub user e-mails API'),
  oauthRedirectUrl: setting('OAUTH_REDIRECT_URL', z.url().optional(), 'where the OAuth callback sends the browser, with the session token in the URL fragment; unset: the callback answers JSON'),
};

export type GatewayConfig = ReturnType<typeof loadGatewayConfig>;
export const loadGatewayConfig = (env?: Record<string, string | undefined>) => loadConfig(gatewaySettings, env);
