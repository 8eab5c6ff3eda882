/**
 * An answered call has exactly one record, even when the audit service is killed under load: the gateway
 * sends an append it saw no answer for again under the same idempotency key until the restarted audit
 * service answers (AUDIT_APPEND_RETRY_MS), and the chain answers a key it has written with that record
 * (docs/audit.md, "Idempotent appends"). Calls that still fail are answered 5xx and have no record.
 */
import { type Tenant, api, call, fleet, newTenant, sleep } from './support/api';

describe('audit service killed under load', () => {
  let t: Tenant;

  beforeAll(async () => {
    t = await newTenant('Audit durability');
    const set = await api('PATCH', '/dashboard/settings', { key: t.apiKey, body: { rate_limit_rps: 100000, rate_limit_burst: 1000000, policy_config: { daily_action_limit: 100000000, anomaly_threshold: 1 } } });
    expect(set.status).toBe(200);
  });

  afterAll(async () => {
    await fleet('start', 'audit').catch(() => undefined);
  });

  it('answers calls in flight across a SIGKILL and restart with exactly one record each', async () => {
    const answers: { status: number; actionId?: string }[] = [];
    let stop = false;
    const worker = async (w: number) => {
      // at most 900 calls in all: the audit log below is read in one page of 1,000
      for (let i = 0; !stop && answers.length < 900; i++) {
        const r = await call(t.apiKey, { agent_id: `agent-${w}`, params: { q: `durable ${w}.${i}` } });
        answers.push({ status: r.status, actionId: r.body?.action_id ?? r.body?.detail?.action_id });
      }
    };
    const workers = Array.from({ length: 8 }, (_, w) => worker(w));
    // counts, not time windows: the kill after 40 answers, the run on until 40 more came after the restart
    const answeredCount = () => answers.filter((a) => [200, 202, 403].includes(a.status)).length;
    const reached = async (n: number) => {
      const giveUpAt = Date.now() + 60_000;
      while (answeredCount() < n && Date.now() < giveUpAt) await sleep(50);
    };
    await reached(40);
    await fleet('kill', 'audit');
    await sleep(500);
    await fleet('start', 'audit');
    const afterRestart = answeredCount();
    await reached(afterRestart + 40);
    stop = true;
    await Promise.all(workers);

    const answered = answers.filter((a) => [200, 202, 403].includes(a.status));
    const failed = answers.filter((a) => a.status >= 500);
    expect(answered.length).toBeGreaterThanOrEqual(80);
    // every answered call carries its action id, and none is answered twice
    expect(answered.every((a) => a.actionId)).toBe(true);
    expect(new Set(answered.map((a) => a.actionId)).size).toBe(answered.length);

    const log = await api('GET', '/audit/log?limit=1000', { key: t.apiKey });
    expect(log.status).toBe(200);
    // the governed calls' records (the tenant's settings change at the start is a control_plane record of its own)
    const recorded = (log.body.records as { action_id: string; source: string; decision: string }[]).filter((r) => !(r.source === 'control_plane' && r.decision === 'changed')).map((r) => r.action_id);
    // exactly one record per answered call, and none for a call answered 5xx
    expect(recorded.length).toBe(answered.length);
    expect(new Set(recorded)).toEqual(new Set(answered.map((a) => a.actionId)));
    for (const f of failed) if (f.actionId) expect(recorded).not.toContain(f.actionId);

    const verify = await api('GET', '/audit/verify', { key: t.apiKey });
    expect(verify.body).toMatchObject({ valid: true, record_count: (log.body.records as unknown[]).length });
  });
});
