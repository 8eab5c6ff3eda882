/**
 * Where the e2e fleet runs and the extra environment it is started with. Features add the settings
 * their tests need (e.g. allowing loopback webhook targets) to E2E_ENV.
 */
import path from 'node:path';

/** Port offset of the e2e fleet; E2E_PORT_OFFSET runs a second suite beside another (gRPC ports stay < 65536 up to 15000). */
export const E2E_OFFSET = Number(process.env.E2E_PORT_OFFSET ?? 10000);
export const E2E_BASE_URL = `http://127.0.0.1:${8080 + E2E_OFFSET}/api`;
export const E2E_CONTROL_URL = `http://127.0.0.1:${8999 + E2E_OFFSET}`;
/** The local stand-in of the external agent platform that the e2e fleet starts (scripted through its control API). */
export const E2E_STAND_IN_URL = `http://127.0.0.1:${4010 + E2E_OFFSET}`;
/** The e2e fleet's own database and stream prefix (per offset, so parallel suites never share state). */
export const E2E_DATABASE_NAME = E2E_OFFSET === 10000 ? 'agw_e2e' : `agw_e2e_${E2E_OFFSET}`;
export const E2E_DATABASE_URL = `postgres://postgres@127.0.0.1:5432/${E2E_DATABASE_NAME}`;
export const E2E_STREAM_PREFIX = E2E_OFFSET === 10000 ? 'E2E' : `E2E${E2E_OFFSET}`;
/**
 * The e2e fleet's own Redis database (1-15; 0 is `npm start`'s and the fault suite's): per-address keys such
 * as the public per-IP limit would otherwise be shared with a fleet running beside it on the same Redis.
 */
export const E2E_REDIS_URL = `redis://127.0.0.1:6379/${1 + (Math.floor(E2E_OFFSET / 100) % 15)}`;
/** Every response the run's API helper saw (JSON lines), checked against the OpenAPI document at the end. */
export const E2E_CONTRACT_LOG = path.resolve(__dirname, `../../../.run/e2e-contract-${E2E_OFFSET}.jsonl`);
/** Extra CA trusted by the e2e webhook service (re-read when it changes); written by the webhook e2e tests. */
export const E2E_WEBHOOK_CA_FILE = path.resolve(__dirname, '../../../.run/e2e-webhook-ca.pem');

export const E2E_ENV: Record<string, string> = {
  LOG_LEVEL: 'info',
  AGW_PROFILE: 'local',
  REDIS_URL: E2E_REDIS_URL,
  ADMIN_EMAILS: 'admin@e2e.test',
  // every e2e test signs up fresh tenants from 127.0.0.1; the per-IP limit itself is tested in the gateway's integration tests
  AUTH_RATE_LIMIT_PER_MINUTE: '100000',
  // provenance tests build and anchor through POST /api/anchor/trigger, so no hourly job races them
  MERKLE_SCHEDULE_ENABLED: 'false',
  ANCHOR_SCHEDULE_ENABLED: 'false',
  // webhook tests run an HTTPS receiver on loopback with a certificate they write to this file
  WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8,::1/128',
  WEBHOOK_CA_FILE: E2E_WEBHOOK_CA_FILE,
  // the OAuth tests serve an MCP client's metadata document over HTTPS on loopback with the same kind of certificate
  OAUTH_CLIENT_METADATA_CA_FILE: E2E_WEBHOOK_CA_FILE,
  // the OPA bundle tests serve a signed bundle over HTTPS on loopback with the same kind of certificate
  POLICY_BUNDLE_ALLOW_CIDRS: '127.0.0.0/8,::1/128',
  POLICY_BUNDLE_CA_FILE: E2E_WEBHOOK_CA_FILE,
  // managed sessions: always the local platform stand-in (never a real platform from the environment),
  // with small tenant limits so the 429s are reachable
  ANTHROPIC_API_KEY: '',
  DEFAULT_MAX_CONCURRENT_SESSIONS: '3',
  DEFAULT_MAX_DAILY_SESSIONS: '6',
  MANAGED_RECONNECT_DELAY_MS: '200',
  // public dashboard: the per-IP limit is reachable; tests that exhaust it send their own X-Forwarded-For
  // as the one ingress in front would (TRUST_PROXY=1: the right-most entry), so the loopback address of
  // every other test keeps its budget
  PUBLIC_RATE_LIMIT_PER_MINUTE: '40',
  TRUST_PROXY: '1',
};
