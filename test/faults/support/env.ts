/**
 * Where the fault suite's fleet runs: port offset 7000 (gRPC ports stay < 65536), its own database and
 * JetStream stream prefix, and two TCP proxies the suite owns in front of Postgres and NATS so it can cut
 * them without touching the machine's servers (others use them).
 */
import path from 'node:path';

export const ROOT = path.resolve(__dirname, '../../..');
export const OFFSET = Number(process.env.FAULTS_PORT_OFFSET ?? 7000);
export const BASE_URL = `http://127.0.0.1:${8080 + OFFSET}/api`;
export const CONTROL_URL = `http://127.0.0.1:${8999 + OFFSET}`;
export const DATABASE_NAME = OFFSET === 7000 ? 'agw_faults' : `agw_faults_${OFFSET}`;
export const STREAM_PREFIX = OFFSET === 7000 ? 'FAULTS' : `FAULTS${OFFSET}`;
export const LOG_DIR = path.join(ROOT, '.run', `logs-${OFFSET}`);
/** The real stores (read-only checks go straight to them; the fleet goes through the proxies). */
export const PG_DIRECT_URL = `postgres://postgres@127.0.0.1:5432/${DATABASE_NAME}`;
export const PG_PROXY_PORT = 5432 + OFFSET + 100; // 12532
export const NATS_DIRECT = { host: '127.0.0.1', port: 4222 };
export const NATS_PROXY_PORT = 4222 + OFFSET + 100; // 11322
export const REDIS_URL = 'redis://127.0.0.1:6379/0';
/** The extra CA the fleet's webhook service trusts (the suite's HTTPS receiver). */
export const WEBHOOK_CA_FILE = path.join(ROOT, '.run', `faults-webhook-ca-${OFFSET}.pem`);
/** The suite's DNS answers for names under .faults.test (support/dns-stub.cjs, preloaded into the fleet; R7). */
export const DNS_FILE = path.join(ROOT, '.run', `faults-dns-${OFFSET}.json`);
/** HS256 key of the fleet's session tokens: the suite signs an expired token with it (R5). */
export const JWT_SECRET = 'faults-suite-jwt-secret-0123456789abcdef';

export const FLEET_ENV: Record<string, string> = {
  LOG_LEVEL: 'info',
  AGW_PROFILE: 'local',
  AUTH_RATE_LIMIT_PER_MINUTE: '100000',
  // the isolation matrix and the fuzzer call the public dashboard routes hundreds of times from one address
  PUBLIC_RATE_LIMIT_PER_MINUTE: '100000',
  MERKLE_SCHEDULE_ENABLED: 'false',
  ANCHOR_SCHEDULE_ENABLED: 'false',
  // one loopback address for the suite's receivers; every other internal address stays refused (R7)
  WEBHOOK_ALLOW_CIDRS: '127.0.0.1/32',
  // brokered upstreams: the production rule (public addresses only) in this local-profile fleet (R7)
  VAULT_ALLOW_PRIVATE_UPSTREAMS: 'false',
  NODE_OPTIONS: `--require ${path.join(__dirname, 'dns-stub.cjs')}`,
  FAULTS_DNS_FILE: DNS_FILE,
  // edge limits short enough to be measured within the suite's few minutes (EDGE part); defaults 10/30/20 s
  GATEWAY_HEADERS_TIMEOUT_MS: '3000',
  GATEWAY_REQUEST_TIMEOUT_MS: '6000',
  GATEWAY_SHUTDOWN_GRACE_MS: '5000',
  WEBHOOK_CA_FILE,
  ANTHROPIC_API_KEY: '',
  MANAGED_RECONNECT_DELAY_MS: '200',
  JWT_SECRET,
  FLEET_DATABASE_URL: `postgres://postgres@127.0.0.1:${PG_PROXY_PORT}/${DATABASE_NAME}`,
  NATS_URL: `nats://127.0.0.1:${NATS_PROXY_PORT}`,
};
