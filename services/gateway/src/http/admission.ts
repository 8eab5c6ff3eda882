/**
 * Overload protection of the governed path (docs/reliability.md, "Overload"): bounded in-flight limits per
 * gateway process and per tenant. A governed call (POST /api/mcp/tools/call, POST to an MCP server) is
 * admitted only while the process serves fewer than its current limit and its tenant fewer than
 * GATEWAY_MAX_IN_FLIGHT_PER_TENANT; otherwise it is shed at once with 503 `{detail}` and `Retry-After`,
 * before its body is parsed, anything is decided or a line is logged. Nothing queues in the gateway: work
 * beyond the limits is refused, so the calls it accepts keep their latency and memory stays bounded.
 *
 * The process limit adapts (AIMD, as TCP congestion control does): it starts at GATEWAY_MAX_IN_FLIGHT and
 * is cut by a fifth, at most once per target interval, when admitted calls take longer than
 * GATEWAY_TARGET_LATENCY_MS of the gateway's own time (the brokered execution of a slow upstream tool does
 * not count: that is the tool's latency, not overload); while calls are fast and the limit is reached it
 * grows again by one per limit's worth of completed calls, up to GATEWAY_MAX_IN_FLIGHT, never below
 * MIN_LIMIT (32). So the limit follows what this machine and its peers can finish in time, without a setting per
 * machine. A call counts from its arrival until its response is closed (sent, or the client went away).
 */
import { OVERLOAD_RETRY_AFTER_SECONDS, type Logger } from '@agw/shared';
import type { Request, RequestHandler, Response } from 'express';
import type { GatewayMetrics } from '../metrics';

export interface AdmissionLimits {
  /** the ceiling of governed calls in flight in this process (0: no limit) */
  perProcess: number;
  /** governed calls in flight per tenant in this process (0: no limit) */
  perTenant: number;
  /** the gateway's own time per admitted call above which the process limit shrinks (0: a fixed limit) */
  targetLatencyMs: number;
}

/**
 * The process limit never adapts below this: calls keep getting through, so the latency is measured, and a
 * client with up to this many calls at once (a benchmark's 32 connections, a test) is never shed by it.
 */
export const MIN_LIMIT = 32;
/** The time of a call that is not the gateway's (res.locals key): a brokered upstream's execution. */
export const EXTERNAL_MS = 'agwExternalMs';

export class Admission {
  private inFlight = 0;
  private readonly byTenant = new Map<string, number>();
  /** the adaptive process limit (a float: additive increase adds 1/limit per completion) */
  private limit: number;
  private lastCut = 0;
  private shedSinceLog = 0;
  private lastLog = 0;

  constructor(
    private readonly limits: AdmissionLimits,
    private readonly metrics: Pick<GatewayMetrics, 'governedInFlight' | 'shed' | 'admissionLimit'>,
    private readonly logger?: Logger,
  ) {
    this.limit = limits.perProcess;
    metrics.admissionLimit.set(limits.perProcess);
  }

  /** First of all (no body parsed, nothing logged yet): the process-wide limit. */
  readonly process: RequestHandler = (req, res, next) => {
    if (req.method !== 'POST') return next();
    if (this.limits.perProcess > 0 && this.inFlight >= Math.floor(this.limit)) {
      return this.shed(res, 'process', `Overloaded: this gateway is serving ${this.inFlight} governed calls, as many as it can finish in time now (limit ${Math.floor(this.limit)}, GATEWAY_MAX_IN_FLIGHT ${this.limits.perProcess}); nothing was done, retry after the Retry-After delay`);
    }
    const started = performance.now();
    const atLimit = this.inFlight + 1 >= Math.floor(this.limit);
    this.inFlight++;
    this.metrics.governedInFlight.inc();
    res.once('close', () => {
      this.inFlight--;
      this.metrics.governedInFlight.dec();
      this.completed(performance.now() - started - Number(res.locals[EXTERNAL_MS] ?? 0), atLimit);
    });
    next();
  };

  /** After authentication: the tenant's own limit, so one tenant cannot take every slot. */
  readonly tenant: RequestHandler = (req: Request, res, next) => {
    const tenantId = req.auth?.tenantId;
    if (req.method !== 'POST' || !tenantId || this.limits.perTenant <= 0) return next();
    const n = this.byTenant.get(tenantId) ?? 0;
    if (n >= this.limits.perTenant) {
      return this.shed(res, 'tenant', `Overloaded: this tenant has ${n} governed calls in flight on this gateway, its limit (GATEWAY_MAX_IN_FLIGHT_PER_TENANT); nothing was done, retry after the Retry-After delay`);
    }
    this.byTenant.set(tenantId, n + 1);
    res.once('close', () => {
      const left = (this.byTenant.get(tenantId) ?? 1) - 1;
      if (left > 0) this.byTenant.set(tenantId, left);
      else this.byTenant.delete(tenantId);
    });
    next();
  };

  /** Governed calls in flight now, and the process limit in force. */
  get state(): { inFlight: number; limit: number } {
    return { inFlight: this.inFlight, limit: Math.floor(this.limit) };
  }

  /** AIMD: a slow call cuts the limit (once per target interval); fast calls at the limit raise it. */
  private completed(ownMs: number, atLimit: boolean): void {
    const { targetLatencyMs: target, perProcess: ceiling } = this.limits;
    if (target <= 0 || ceiling <= 0) return;
    const now = performance.now();
    if (ownMs > target) {
      if (now - this.lastCut < target) return;
      this.lastCut = now;
      this.limit = Math.max(MIN_LIMIT, this.limit * 0.8);
    } else if (atLimit && this.limit < ceiling) {
      this.limit = Math.min(ceiling, this.limit + 1 / this.limit);
    } else return;
    this.metrics.admissionLimit.set(Math.floor(this.limit));
  }

  /** 503 at once, in the API's error shape; one log line per second at most says how many were shed. */
  private shed(res: Response, limit: 'process' | 'tenant', detail: string): void {
    this.metrics.shed.inc({ limit });
    this.shedSinceLog++;
    const now = Date.now();
    if (this.logger && now - this.lastLog >= 1000) {
      this.logger.warn({ shed: this.shedSinceLog, limit, in_flight: this.inFlight, process_limit: Math.floor(this.limit) }, 'overload: governed calls shed with 503');
      this.shedSinceLog = 0;
      this.lastLog = now;
    }
    res.status(503).set('Retry-After', String(OVERLOAD_RETRY_AFTER_SECONDS)).json({ detail });
  }
}

/** The paths of the governed path that admission control guards (under /api). */
export const GOVERNED_PATHS = ['/mcp/tools/call', '/mcp/server'];
