/** Gateway settings (env validated once at start; defaults work on a developer machine). */
import { commonSettings, envBool, envInt, envPort, loadConfig, setting, storeSettings } from '@agw/shared';
import { z } from 'zod';

export const gatewaySettings = {
  ...commonSettings,
  ...storeSettings,
  host: setting('GATEWAY_HOST', z.string().default('127.0.0.1'), 'public HTTP listen address'),
  port: setting('GATEWAY_PORT', envPort(8080), 'public HTTP port'),
  opsHost: setting('GATEWAY_OPS_HOST', z.string().default('127.0.0.1'), 'health/metrics listen address'),
  opsPort: setting('GATEWAY_OPS_PORT', envPort(9080), 'health/metrics port'),
  publicBaseUrl: setting('PUBLIC_BASE_URL', z.string().default('http://127.0.0.1:8080/api'), 'base URL clients use (printed, used in MCP server URLs)'),
  policyGrpcUrl: setting('POLICY_GRPC_URL', z.string().default('127.0.0.1:50051'), 'policy service gRPC address'),
  auditGrpcUrl: setting('AUDIT_GRPC_URL', z.string().default('127.0.0.1:50052'), 'audit service gRPC address'),
  vaultGrpcUrl: setting('VAULT_GRPC_URL', z.string().default('127.0.0.1:50053'), 'vault service gRPC address'),
  webhookGrpcUrl: setting('WEBHOOK_GRPC_URL', z.string().default('127.0.0.1:50054'), 'webhook service gRPC address'),
  anchorGrpcUrl: setting('ANCHOR_GRPC_URL', z.string().default('127.0.0.1:50055'), 'anchor service gRPC address'),
  requireVerifiedEmail: setting('AUTH_REQUIRE_VERIFIED_EMAIL', envBool(false), 'password login only after the e-mail address is verified (always on in the production profile; locally the link is only logged)'),
  managedGrpcUrl: setting('MANAGED_GRPC_URL', z.string().default('127.0.0.1:50056'), 'managed-session service gRPC address (/api/managed/*)'),
  policyDeadlineMs: setting('POLICY_DEADLINE_MS', envInt(2000), 'deadline of one policy evaluation before the failure mode applies'),
  auditDeadlineMs: setting('AUDIT_DEADLINE_MS', envInt(10_000), 'deadline of one audit call (append, log, verify)'),
  vaultDeadlineMs: setting('VAULT_DEADLINE_MS', envInt(10_000), 'deadline of one vault call (PII protection, brokered execution, credentials)'),
  merkleDeadlineMs: setting('MERKLE_DEADLINE_MS', envInt(60_000), 'deadline of Merkle and compliance-export calls (a triggered build may wait for a running one)'),
  anchorDeadlineMs: setting('ANCHOR_DEADLINE_MS', envInt(120_000), 'deadline of anchor calls (a trigger waits for its transaction receipt)'),
  webhookDeadlineMs: setting('WEBHOOK_DEADLINE_MS', envInt(30_000), 'deadline of webhook-service calls (a test delivery waits for its first attempt)'),
  managedDeadlineMs: setting('MANAGED_DEADLINE_MS', envInt(60_000), 'deadline of managed-session calls (creating a session waits for the agent platform)'),
  probeDeadlineMs: setting('HEALTH_PROBE_DEADLINE_MS', envInt(2000), 'deadline of the dependency probes behind GET /api/health and status reads'),
  jwtSecret: setting('JWT_SECRET', z.string().min(32).optional(), 'HS256 key of session tokens (required in production; a random one per process otherwise)'),
  jwtTtlSeconds: setting('JWT_TTL_SECONDS', envInt(3600), 'session token lifetime'),
  adminEmails: setting('ADMIN_EMAILS', z.string().default(''), 'comma-separated e-mails of administrators (POST/GET /tenants)'),
  defaultRateLimitRps: setting('DEFAULT_RATE_LIMIT_RPS', envInt(50), 'default sustained requests per second per tenant'),
  defaultRateLimitBurst: setting('DEFAULT_RATE_LIMIT_BURST', envInt(100), 'default burst per tenant (requests allowed in a burst/rps window)'),
  authRateLimitPerMinute: setting('AUTH_RATE_LIMIT_PER_MINUTE', envInt(30), 'signup/login attempts per client IP per minute'),
  trustProxy: setting('TRUST_PROXY', envBool(false), 'honour X-Forwarded-For (behind an ingress)'),
  mcpIpAllowlist: setting('MCP_IP_ALLOWLIST', z.string().default(''), 'comma-separated source IPs/CIDRs allowed to use /api/mcp/server (empty: any authenticated caller)'),
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
