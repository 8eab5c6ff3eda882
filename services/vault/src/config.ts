/** Vault service settings (env validated once at start; defaults work on a developer machine). */
import path from 'node:path';
import { parseTenantCidrs } from '@agw/egress';
import { ConfigError, envBool, envCidrList, envInt, grpcServiceSettings, internalCidrsAllowed, loadConfig, setting } from '@agw/shared';
import { z } from 'zod';

/** The repository root (services/vault/{src,dist}/ -> ../../..): home of the project-owned `.run/` dir. */
const repoRoot = path.resolve(__dirname, '..', '..', '..');

export const vaultSettings = {
  ...grpcServiceSettings('vault'),

  backend: setting('VAULT_HSM_BACKEND', z.enum(['pkcs11', 'transit']).default('pkcs11'), 'key backend: pkcs11 (any PKCS#11 HSM; SoftHSM2 locally) or transit (HashiCorp Vault Transit)'),
  pkcs11Library: setting('PKCS11_LIBRARY', z.string().default('/usr/lib/softhsm/libsofthsm2.so'), 'path of the PKCS#11 module of the HSM'),
  pkcs11TokenLabel: setting('PKCS11_TOKEN_LABEL', z.string().min(1).max(32).default('agw-vault'), 'label of the HSM token holding the keys (the slot is found by this label)'),
  pkcs11Pin: setting('PKCS11_PIN', z.string().min(4).default('98765432'), 'user PIN of the token (the local default only suits SoftHSM2 on a developer machine)'),
  pkcs11SoPin: setting('PKCS11_SO_PIN', z.string().min(4).default('12345678'), 'security-officer PIN, only used to initialise the local SoftHSM2 token'),
  softhsmInit: setting('SOFTHSM_INIT', envBool(true), 'initialise the SoftHSM2 token (idempotently) at start when the library is SoftHSM2; off for a real HSM'),
  softhsmConf: setting('SOFTHSM2_CONF', z.string().default(path.join(repoRoot, '.run', 'softhsm', 'softhsm2.conf')), 'SoftHSM2 config file (written on first start; tokens live beside it in tokens/)'),

  transitAddr: setting('VAULT_ADDR', z.string().optional(), 'HashiCorp Vault address (transit backend)'),
  transitToken: setting('VAULT_TOKEN', z.string().optional(), 'HashiCorp Vault token (transit backend)'),
  transitMount: setting('VAULT_TRANSIT_MOUNT', z.string().regex(/^[A-Za-z0-9_/-]+$/).default('transit'), 'mount path of the Transit secrets engine'),

  allowPrivateUpstreams: setting(
    'VAULT_ALLOW_PRIVATE_UPSTREAMS',
    z
      .enum(['true', 'false', '1', '0', 'yes', 'no', 'on', 'off'])
      .optional()
      .transform((v) => (v === undefined ? undefined : ['true', '1', 'yes', 'on'].includes(v))),
    'local profile only: every tenant\'s brokered calls may reach loopback/private addresses (default: true in the local profile; true is refused in production, where ranges are granted per tenant with UPSTREAM_ALLOW_CIDRS_BY_TENANT)',
  ),
  upstreamTimeoutMs: setting('VAULT_UPSTREAM_TIMEOUT_MS', envInt(10_000), 'timeout of one brokered upstream call (connect + response)'),
  upstreamMaxBytes: setting('VAULT_UPSTREAM_MAX_BYTES', envInt(1_048_576), 'largest upstream response body returned to the agent'),
  upstreamAllowCidrs: setting(
    'UPSTREAM_ALLOW_CIDRS',
    envCidrList,
    'local profile only: address ranges every tenant\'s federated MCP upstreams may reach besides public addresses, comma-separated CIDRs (default: loopback; refused in production, where ranges are granted per tenant with UPSTREAM_ALLOW_CIDRS_BY_TENANT)',
  ),
  upstreamAllowCidrsByTenant: setting(
    'UPSTREAM_ALLOW_CIDRS_BY_TENANT',
    z
      .string()
      .optional()
      .transform((v, ctx) => {
        if (!v) return undefined;
        try {
          return parseTenantCidrs(v);
        } catch (e) {
          ctx.addIssue({ code: 'custom', message: (e as Error).message });
          return z.NEVER;
        }
      }),
    'egress exceptions an operator grants per tenant: address ranges besides public ones that this tenant\'s federated upstreams, their token endpoints and its brokered credentials\' upstream_url may reach, as TENANT_ID=CIDR[,CIDR...] entries separated by ";" (docs/federation.md, "Egress"); another tenant never reaches them',
  ),
  upstreamRequireHttps: setting('UPSTREAM_REQUIRE_HTTPS', z.enum(['true', 'false']).optional(), 'federated MCP upstreams must use https (default: true outside the local profile)'),
  federationCallTimeoutMs: setting('FEDERATION_CALL_TIMEOUT_MS', envInt(30_000), 'timeout of one call to an upstream MCP server (an upstream may set its own timeout_ms)'),
  federationConnectTimeoutMs: setting('FEDERATION_CONNECT_TIMEOUT_MS', envInt(10_000), 'timeout of connecting to an upstream MCP server (TCP, TLS, initialize)'),
  federationMaxResultBytes: setting('FEDERATION_MAX_RESULT_BYTES', envInt(1_048_576), 'largest tool result (JSON bytes) an upstream may return; larger fails the call'),
  federationMaxTools: setting('FEDERATION_MAX_TOOLS', envInt(1000), 'most tools kept of one upstream (the rest are ignored and the upstream says so)'),
  federationMaxToolBytes: setting('FEDERATION_MAX_TOOL_BYTES', envInt(65_536), 'largest tool definition (its JSON: every key, string and number) kept of an upstream; a larger one is refused, named in the upstream\'s status_reason (a larger prompt definition is not kept either)'),
  federationMaxSyncBytes: setting('FEDERATION_MAX_SYNC_BYTES', envInt(4_194_304), 'most bytes of tool definitions read from an upstream in one tools/list (all pages); the read stops there and says so. The same bound applies to one upstream\'s prompts/list, resources/list and resources/templates/list'),
  federationMaxUpstreams: setting('FEDERATION_MAX_UPSTREAMS', envInt(50), 'most upstream MCP servers one tenant registers; a deleted name that keeps its pins counts until a human discards them'),
  federationSyncBurst: setting('FEDERATION_SYNC_BURST', envInt(5), 'reads of one upstream\'s tools (registration, refresh, tools/list_changed) allowed in a burst'),
  federationSyncIntervalMs: setting('FEDERATION_SYNC_INTERVAL_MS', envInt(6_000), 'one more read of an upstream\'s tools every this many ms after the burst (a refresh beyond it is 429; a list_changed waits)'),
  federationQuarantineAlertWindowMs: setting('FEDERATION_QUARANTINE_ALERT_WINDOW_MS', envInt(3_600_000), 'at most one quarantine record and tool.quarantined webhook per tool in this window (a human approval starts a new one)'),
  federationIdleMs: setting('FEDERATION_IDLE_MS', envInt(300_000), 'an upstream connection unused this long is closed'),
  federationMaxConnections: setting('FEDERATION_MAX_CONNECTIONS', envInt(1000), 'most upstream connections open in one vault process (least recently used closed first)'),
  evidenceLogHost: setting(
    'EVIDENCE_LOG_HOST',
    z.string().regex(/^[^\s+/]+$/, 'a host name without spaces, "+" or "/"').default('localhost'),
    'public host in the origin (= note key name) of each tenant\'s log: <EVIDENCE_LOG_HOST>/agw/<tenant_id> (set the public host of the gateway in production; changing it changes every verifier key)',
  ),
};

export type VaultConfig = ReturnType<typeof loadVaultConfig>;

export function loadVaultConfig(env?: Record<string, string | undefined>) {
  const c = loadConfig(vaultSettings, env);
  if (c.profile === 'production' && c.backend === 'pkcs11' && c.pkcs11Pin === vaultSettings.pkcs11Pin.schema.parse(undefined)) {
    throw new ConfigError(['PKCS11_PIN: the local default PIN is refused in the production profile']);
  }
  if (c.backend === 'transit' && (!c.transitAddr || !c.transitToken)) {
    throw new ConfigError(['VAULT_ADDR and VAULT_TOKEN: required by VAULT_HSM_BACKEND=transit']);
  }
  const local = c.profile === 'local';
  // the fleet-wide forms open a range to every tenant: only the local profile keeps them
  if (!local && c.upstreamAllowCidrs?.length) {
    throw new ConfigError(['UPSTREAM_ALLOW_CIDRS: opens a range to every tenant and is refused in the production profile; grant it to the tenants that need it with UPSTREAM_ALLOW_CIDRS_BY_TENANT']);
  }
  if (!local && c.allowPrivateUpstreams) {
    throw new ConfigError(['VAULT_ALLOW_PRIVATE_UPSTREAMS: opens every address to every tenant\'s brokered calls and is refused in the production profile; grant ranges per tenant with UPSTREAM_ALLOW_CIDRS_BY_TENANT']);
  }
  const upstreamAllowCidrs = internalCidrsAllowed(c.upstreamAllowCidrs, c.profile);
  return {
    ...c,
    allowPrivateUpstreams: c.allowPrivateUpstreams ?? local,
    upstreamAllowCidrs,
    upstreamRequireHttps: c.upstreamRequireHttps === undefined ? !local : c.upstreamRequireHttps === 'true',
  };
}
