/** Test support: the real stores, a tenant with webhook settings, decision events on a private stream prefix. */
import { randomBytes, randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Bus, type Db, type DecisionEvent, type Logger, TEST_DATABASE_URL, TEST_NATS_URL, openTestBus, publishEvent, sampleDecisionEvent, subjects } from '@agw/shared';

/** A stream prefix no other test file uses. */
export const uniquePrefix = (name: string) => `WHT_${name}_${randomBytes(3).toString('hex')}`;

/** The environment of a webhook service for tests: loopback allowed explicitly (production profile). */
export function testEnv(prefix: string, caFile: string, over: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  return {
    DATABASE_URL: TEST_DATABASE_URL,
    NATS_URL: TEST_NATS_URL,
    AGW_STREAM_PREFIX: prefix,
    AGW_PROFILE: 'production',
    LOG_LEVEL: 'silent',
    WEBHOOK_GRPC_PORT: '0',
    WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8,::1/128',
    WEBHOOK_CA_FILE: caFile,
    WEBHOOK_POLL_MS: '200',
    ...over,
  };
}

export function writeCaFile(pem: string): string {
  const file = path.join(tmpdir(), `agw-webhook-ca-${randomUUID()}.pem`);
  writeFileSync(file, pem);
  return file;
}

export interface TestTenant {
  id: string;
  secret: string;
}

/** A tenant row plus its settings as the gateway stores them. */
export async function createTenant(db: Db, webhook: { url: string | null; secret?: string | null; events?: string[] }): Promise<TestTenant> {
  const id = randomUUID();
  const secret = webhook.secret === undefined ? `whsec_${randomBytes(24).toString('base64url')}` : webhook.secret;
  await db.insertInto('tenants').values({ id, slug: `wh-${id}`, name: 'Webhook test' }).execute();
  const settings: Record<string, unknown> = { webhook_url: webhook.url };
  if (secret) settings.webhook_secret = secret;
  if (webhook.events) settings.webhook_events = webhook.events;
  await db.insertInto('tenant_settings').values({ tenant_id: id, settings: JSON.stringify(settings) }).execute();
  return { id, secret: secret ?? '' };
}

/** A decision event of `tenantId` (the contract's sample, `over` on top). */
export const decisionEvent = sampleDecisionEvent;

export async function publishDecision(bus: Bus, e: DecisionEvent): Promise<void> {
  await publishEvent(bus, subjects.decision(bus.prefix, e.tenant_id, e.kind), e);
}

export async function publisherBus(prefix: string): Promise<Bus> {
  return openTestBus(prefix, 'webhook-test-publisher');
}

/** A logger that keeps every line (as JSON text), to check what reaches the logs. */
export function capturingLogger(lines: string[] = []): Logger & { lines: string[] } {
  const write =
    (level: string) =>
    (a: unknown, b?: unknown): void => {
      lines.push(JSON.stringify({ level, a, b }, (_k, v: unknown) => (v instanceof Error ? { ...v, message: v.message, stack: v.stack } : v)));
    };
  const logger = {
    lines,
    level: 'trace',
    trace: write('trace'),
    debug: write('debug'),
    info: write('info'),
    warn: write('warn'),
    error: write('error'),
    fatal: write('fatal'),
    child: () => logger,
    isLevelEnabled: () => true,
  };
  return logger as unknown as Logger & { lines: string[] };
}
