/**
 * Durability against the real stores: a webhook service killed with SIGKILL mid-stream and started again
 * loses no event, and replicas sharing the durable consumer and the delivery table never do the same work.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { type Bus, type Db, type SelfSignedCert, closeTestBus, createLogger, freeLoopbackPort, openTestDb } from '@agw/shared';
import { type StartedWebhook, startWebhook } from './support/start-webhook';
import { createTenant, decisionEvent, publishDecision, publisherBus, testEnv, uniquePrefix, writeCaFile } from './support/harness';
import { receiverCert, startReceiver } from './support/https-receiver';

jest.setTimeout(90_000);

let db: Db;
let cert: SelfSignedCert;
let caFile: string;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  db = await openTestDb();
  cert = receiverCert();
  caFile = writeCaFile(cert.cert);
});

afterAll(async () => {
  await db.destroy();
  rmSync(caFile, { force: true });
});

/** The service as its own process, run from the sources, so SIGKILL is a real crash. */
function spawnService(env: Record<string, string | undefined>): ChildProcess {
  const child = spawn(process.execPath, [path.join(__dirname, 'support/run-service.js')], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.stderr?.resume();
  return child;
}

async function waitReady(opsPort: number, timeoutMs = 20_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    try {
      if ((await fetch(`http://127.0.0.1:${opsPort}/readyz`)).ok) return;
    } catch {
      /* not up yet */
    }
    await sleep(100);
  }
  throw new Error('webhook service not ready');
}

describe('durability', () => {
  it('killing the service (SIGKILL) mid-stream and starting it again loses no event', async () => {
    const prefix = uniquePrefix('kill');
    const bus = await publisherBus(prefix);
    const rx = await startReceiver(cert);
    const opsPort = await freeLoopbackPort();
    const env = testEnv(prefix, caFile, { WEBHOOK_OPS_PORT: String(opsPort) });
    try {
      const t = await createTenant(db, { url: rx.url() });
      let child = spawnService(env);
      await waitReady(opsPort);
      const events = Array.from({ length: 60 }, () => decisionEvent(t.id));
      // publish while the service runs, kill it in the middle of the stream, keep publishing while it is down
      for (const [i, e] of events.entries()) {
        await publishDecision(bus, e);
        if (i === 20) {
          await rx.waitFor(5);
          child.kill('SIGKILL');
          await new Promise((r) => child.once('exit', r));
        }
        if (i > 20) await sleep(10);
      }
      const receivedBeforeRestart = new Set(rx.requests.map((r) => r.json.data.action_id)).size;
      expect(receivedBeforeRestart).toBeLessThan(events.length);
      child = spawnService(env);
      try {
        await waitReady(opsPort);
        // rows leased by the killed process become due when their lease ends (timeout + connect + 5 s)
        const until = Date.now() + 60_000;
        while (Date.now() < until && events.some((e) => rx.forAction(e.action_id).length === 0)) await sleep(200);
        const missing = events.filter((e) => rx.forAction(e.action_id).length === 0);
        expect(missing).toEqual([]);
        const rows = await db.selectFrom('webhook_deliveries').select(['status']).where('tenant_id', '=', t.id).execute();
        expect(rows).toHaveLength(events.length);
      } finally {
        child.kill('SIGTERM');
        await new Promise((r) => child.once('exit', r));
      }
    } finally {
      await rx.close();
      await closeTestBus(bus);
    }
  });

  it('two replicas share the work: every event is delivered exactly once', async () => {
    const prefix = uniquePrefix('replicas');
    const bus = await publisherBus(prefix);
    const rx = await startReceiver(cert);
    const logger = createLogger('webhook', 'silent');
    const replicas: StartedWebhook[] = [];
    try {
      for (let i = 0; i < 2; i++) replicas.push(await startWebhook(prefix, caFile, { logger }));
      const t = await createTenant(db, { url: rx.url() });
      const events = Array.from({ length: 80 }, () => decisionEvent(t.id));
      await Promise.all(events.map((e) => publishDecision(bus, e)));
      await rx.waitFor(events.length, 30_000);
      await sleep(1000);
      expect(rx.requests).toHaveLength(events.length);
      expect(new Set(rx.requests.map((r) => r.headers['x-service-delivery'])).size).toBe(events.length);
      for (const e of events) expect(rx.forAction(e.action_id)).toHaveLength(1);
    } finally {
      for (const r of replicas) await r.close();
      await rx.close();
      await closeTestBus(bus);
    }
  });
});
