import { EventEmitter } from 'node:events';
import type { NextFunction, Request, Response } from 'express';
import { Admission, EXTERNAL_MS, MIN_LIMIT } from './admission';

/** A response that records what the middleware answered and closes when told. */
function fakeRes() {
  const e = new EventEmitter() as EventEmitter & { locals: Record<string, unknown>; statusCode?: number; headers: Record<string, string>; body?: unknown };
  e.locals = {};
  e.headers = {};
  const res = Object.assign(e, {
    status(code: number) {
      e.statusCode = code;
      return res;
    },
    set(k: string, v: string) {
      e.headers[k] = v;
      return res;
    },
    json(b: unknown) {
      e.body = b;
      return res;
    },
  });
  return res;
}

const metrics = () => {
  const m = { inFlight: 0, shed: [] as string[], limit: 0 };
  return {
    m,
    sink: {
      governedInFlight: { inc: () => m.inFlight++, dec: () => m.inFlight-- },
      shed: { inc: (l: { limit: string }) => m.shed.push(l.limit) },
      admissionLimit: { set: (v: number) => (m.limit = v) },
    } as never,
  };
};

const post = (tenantId?: string) => ({ method: 'POST', auth: tenantId ? { tenantId } : undefined }) as unknown as Request;

function admit(a: Admission, which: 'process' | 'tenant', req: Request) {
  const res = fakeRes();
  let passed = false;
  a[which](req, res as unknown as Response, (() => (passed = true)) as NextFunction);
  return { res, passed };
}

describe('admission control of the governed path', () => {
  it('sheds beyond the process limit with 503, Retry-After and a detail, before calling the route; a closed response frees its slot', () => {
    const { m, sink } = metrics();
    const a = new Admission({ perProcess: 2, perTenant: 0, targetLatencyMs: 0 }, sink);
    const first = admit(a, 'process', post());
    const second = admit(a, 'process', post());
    const third = admit(a, 'process', post());
    expect([first.passed, second.passed, third.passed]).toEqual([true, true, false]);
    expect(third.res.statusCode).toBe(503);
    expect(third.res.headers['Retry-After']).toBe('1');
    expect((third.res.body as { detail: string }).detail).toMatch(/^Overloaded: this gateway is serving 2 governed calls/);
    expect(m.shed).toEqual(['process']);
    expect(m.inFlight).toBe(2);
    first.res.emit('close');
    expect(admit(a, 'process', post()).passed).toBe(true);
    // other methods are not governed calls
    expect(admit(a, 'process', { method: 'GET' } as Request).passed).toBe(true);
  });

  it("holds each tenant to its own limit, so one tenant cannot take every slot", () => {
    const { m, sink } = metrics();
    const a = new Admission({ perProcess: 0, perTenant: 1, targetLatencyMs: 0 }, sink);
    const one = admit(a, 'tenant', post('a'));
    expect(one.passed).toBe(true);
    const again = admit(a, 'tenant', post('a'));
    expect(again.passed).toBe(false);
    expect((again.res.body as { detail: string }).detail).toMatch(/this tenant has 1 governed calls in flight/);
    expect(admit(a, 'tenant', post('b')).passed).toBe(true);
    one.res.emit('close');
    expect(admit(a, 'tenant', post('a')).passed).toBe(true);
    expect(m.shed).toEqual(['tenant']);
  });

  it('adapts: slow calls cut the limit (never below the floor), fast calls at the limit raise it back; an upstream tool’s own time does not count', () => {
    const { m, sink } = metrics();
    const a = new Admission({ perProcess: 100, perTenant: 0, targetLatencyMs: 0.001 }, sink);
    const now = jest.spyOn(performance, 'now');
    let t = 0;
    now.mockImplementation(() => t);
    // a call that takes 10 ms of the gateway's own time: over target, cut by a fifth
    const slow = admit(a, 'process', post());
    t += 10;
    slow.res.emit('close');
    expect(a.state.limit).toBe(80);
    // 10 ms spent in an upstream's execution: not the gateway's time, no cut
    const brokered = admit(a, 'process', post());
    t += 10;
    brokered.res.locals[EXTERNAL_MS] = 10;
    brokered.res.emit('close');
    expect(a.state.limit).toBe(80);
    for (let i = 0; i < 50; i++) {
      const c = admit(a, 'process', post());
      t += 10;
      c.res.emit('close');
    }
    expect(a.state.limit).toBe(MIN_LIMIT);
    expect(m.limit).toBe(MIN_LIMIT);
    // fast calls while the limit is reached raise it again, one per limit's worth of completions
    const held = Array.from({ length: MIN_LIMIT - 1 }, () => admit(a, 'process', post()));
    for (let i = 0; i < MIN_LIMIT * 3; i++) {
      const c = admit(a, 'process', post());
      c.res.emit('close');
    }
    expect(a.state.limit).toBeGreaterThan(MIN_LIMIT);
    for (const h of held) h.res.emit('close');
    now.mockRestore();
  });
});
