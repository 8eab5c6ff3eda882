/**
 * Real load: a concurrent loop of POST /api/mcp/tools/call over a few tenants with a mix of allowed,
 * denied and escalated calls (financial template: a search is allowed, a 9,000 EUR transfer denied, a
 * 2,000 EUR transfer escalated). Every call carries a unique `params.ref`, so its audit record (or its
 * absence) is found afterwards, and every answer is kept: tenant, kind, status, action id, start/end times.
 * (A fetch loop rather than autocannon: every answer's body is needed, not only counts.)
 */
import { BASE_URL } from './env';
import type { Tenant } from './api';

export type Kind = 'allow' | 'deny' | 'escalate';
export interface CallResult {
  tenant: Tenant;
  kind: Kind;
  ref: string;
  agent: string;
  status: number; // 0: no answer (timeout, connection error)
  actionId?: string;
  violations?: string[];
  detail?: unknown;
  t0: number;
  t1: number;
  phase: string;
}

export const KIND_MIX: Kind[] = ['allow', 'allow', 'deny', 'escalate'];

export function toolCallBody(kind: Kind, ref: string, agent: string): Record<string, unknown> {
  const base = { agent_id: agent, agent_type: 'assistant', agent_version: '1.0.0' };
  if (kind === 'allow') return { ...base, tool: 'svc_web_search', method: 'search', params: { q: 'status page', ref } };
  return { ...base, tool: 'svc_payments', method: 'transfer', params: { amount: kind === 'deny' ? 9000 : 2000, currency: 'EUR', ref } };
}

/** The answer the fleet gives for `kind` when every service works. */
export const NORMAL_STATUS: Record<Kind, number> = { allow: 200, deny: 403, escalate: 202 };

/** The policy settings every load tenant gets (limits lifted so only the faults change decisions). */
export const LOAD_SETTINGS = {
  policy_template: 'financial',
  policy_config: { business_hours_only: false, daily_transaction_cap: 100_000_000 },
  rate_limit_rps: 100_000,
  rate_limit_burst: 1_000_000,
};

let seq = 0;

export async function oneCall(tenant: Tenant, kind: Kind, phase: string, run: string, agent = `agent-${kind}`): Promise<CallResult> {
  const ref = `${run}-${++seq}`;
  const t0 = Date.now();
  const r: CallResult = { tenant, kind, ref, agent, status: 0, t0, t1: t0, phase };
  try {
    const res = await fetch(`${BASE_URL}/mcp/tools/call`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': tenant.apiKey },
      body: JSON.stringify(toolCallBody(kind, ref, agent)),
      signal: AbortSignal.timeout(15_000),
    });
    const text = await res.text();
    r.status = res.status;
    try {
      const body = JSON.parse(text);
      r.actionId = body.action_id ?? body.detail?.action_id;
      r.violations = body.violations ?? body.detail?.violations;
      if (res.status >= 400 && res.status !== 403) r.detail = body.detail ?? body;
    } catch {
      r.detail = text.slice(0, 200);
    }
  } catch (e) {
    r.detail = failureOf(e);
  }
  r.t1 = Date.now();
  return r;
}

/** fetch's own message ("fetch failed") with its cause's code and message (reset, refused, timeout, ...) */
function failureOf(e: unknown): string {
  // not `instanceof Error`: fetch's errors come from another realm than jest's test context
  const err = e as { message?: string; cause?: { code?: string; name?: string; message?: string } };
  if (typeof err?.message !== 'string') return String(e);
  return err.cause ? `${err.message}: ${err.cause.code ?? err.cause.name} ${err.cause.message}` : err.message;
}

/** A running load: `concurrency` loops, each picking tenants and kinds round-robin, until stop(). */
export class Load {
  readonly results: CallResult[] = [];
  phase = 'warm-up';
  private running = false;
  private loops: Promise<void>[] = [];

  constructor(
    private readonly tenants: Tenant[],
    private readonly run: string,
    private readonly concurrency = 12,
    private readonly mix: Kind[] = KIND_MIX,
  ) {}

  start(): this {
    this.running = true;
    let n = 0;
    for (let i = 0; i < this.concurrency; i++)
      this.loops.push(
        (async () => {
          while (this.running) {
            const k = n++;
            const tenant = this.tenants[k % this.tenants.length];
            const kind = this.mix[Math.floor(k / this.tenants.length) % this.mix.length];
            const r = await oneCall(tenant, kind, this.phase, this.run);
            this.results.push(r);
            // no answer (the gateway stopped: connection refused): do not spin
            if (r.status === 0) await new Promise((res) => setTimeout(res, 50));
          }
        })(),
      );
    return this;
  }

  async stop(): Promise<CallResult[]> {
    this.running = false;
    await Promise.all(this.loops);
    this.loops = [];
    return this.results;
  }
}

/**
 * Open-loop load: calls arrive at `ratePerSecond` for `durationMs` whatever the answers take (the way
 * overload happens: clients do not slow down because the gateway does), spread over the tenants and
 * kinds round-robin. At most `maxOutstanding` calls are open at once, so the suite itself never runs out of
 * sockets; the rate actually offered is returned with the answers.
 */
export async function openLoop(tenants: Tenant[], run: string, phase: string, ratePerSecond: number, durationMs: number, maxOutstanding = 3000): Promise<{ results: CallResult[]; offered: number; skipped: number }> {
  const results: CallResult[] = [];
  const open = new Set<Promise<void>>();
  const t0 = Date.now();
  let sent = 0;
  let skipped = 0;
  while (Date.now() - t0 < durationMs) {
    const due = Math.floor(((Date.now() - t0) / 1000) * ratePerSecond);
    for (; sent < due; sent++) {
      if (open.size >= maxOutstanding) {
        skipped++;
        continue;
      }
      const tenant = tenants[sent % tenants.length];
      const kind = KIND_MIX[Math.floor(sent / tenants.length) % KIND_MIX.length];
      const p: Promise<void> = oneCall(tenant, kind, phase, run).then((r) => {
        results.push(r);
        open.delete(p);
      });
      open.add(p);
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  await Promise.all(open);
  return { results, offered: Math.round(((sent - skipped) * 1000) / (Date.now() - t0 || 1)), skipped };
}

/** The `q`-quantile of the durations of `results` (ms). */
export function quantileMs(results: CallResult[], q: number): number {
  const d = results.map((r) => r.t1 - r.t0).sort((a, b) => a - b);
  return d.length ? d[Math.min(d.length - 1, Math.floor(q * d.length))] : 0;
}

export function byStatus(results: CallResult[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of results) out[r.status] = (out[r.status] ?? 0) + 1;
  return out;
}
