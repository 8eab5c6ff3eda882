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
/** HS256 key of the fleet's session tokens: the suite signs an expired token with it (R5). */
export const JWT_SECRET = 'faults-suite-jwt-secret-0123456789abcdef';

export const FLEET_ENV: Record<string, string> = {
  LOG_LEVEL: 'info',
  AGW_PROFILE: 'local',
  AUTH_RATE_LIMIT_PER_MINUTE: '100000',
  MERKLE_SCHEDULE_ENABLED: 'false',
  ANCHOR_SCHEDULE_ENABLED: 'false',
  WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8,::1/128',
  WEBHOOK_CA_FILE,
  ANTHROPIC_API_KEY: '',
  MANAGED_RECONNECT_DELAY_MS: '200',
  JWT_SECRET,
  FLEET_DATABASE_URL: `postgres://postgres@127.0.0.1:${PG_PROXY_PORT}/${DATABASE_NAME}`,
  NATS_URL: `nats://127.0.0.1:${NATS_PROXY_PORT}`,
};
