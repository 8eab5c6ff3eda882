/**
 * Multiplexed calls: the calls of one unary method carried over long-lived bidirectional streams
 * (`rpc XStream(stream XCall) returns (stream XAnswer)`, envelopes in the protos: call_id, request |
 * response, metadata, agw.common.v1.CallError). A grpc-js unary call costs ~140 µs of CPU on client and
 * server together (a call object and interceptor chain, HTTP/2 HEADERS, DATA and trailers each way); a
 * message on an open stream ~30 (docs/history/performance-2026.md). Used for the two calls of every governed tool call.
 *
 * Semantics are the unary call's:
 * - an answer carries the response, or the error the unary call would have had (same AppError on the
 *   client, through the same agw.common.v1.ErrorInfo a unary call carries in its trailer);
 * - a per-call deadline (client side) ends as DEADLINE_EXCEEDED does: OverloadedError when the call was on
 *   an open stream of a connected channel (the peer is up but slow), else DependencyUnavailableError;
 * - a stream that fails (peer gone, connection reset) fails its unanswered calls with
 *   DependencyUnavailableError, as UNAVAILABLE does: they may or may not have been handled;
 * - a server that shuts down gracefully answers every request it has read, stops reading, and ends its
 *   streams with OK; the client sends the calls still unanswered on a stream that ended cleanly again on a
 *   new one (they were never handled), as grpc-js retries a unary call refused by a GOAWAY.
 */
import type { common } from '@agw/proto';
import { type Client, Metadata, type ServerDuplexStream, type ServiceError, status } from '@grpc/grpc-js';
import { type AppError, DependencyUnavailableError, overloadedPeer } from './errors';

/** The request envelope of a multiplexed method (ts-proto names). */
export interface MuxCall<Req> {
  call_id: number;
  request: Req | undefined;
  metadata: { [key: string]: string };
}

/** The answer envelope of a multiplexed method (ts-proto names). */
export interface MuxAnswer<Res> {
  call_id: number;
  response: Res | undefined;
  error: { status: number; details: string; error: common.ErrorInfo | undefined } | undefined;
}

// ---------------------------------------------------------------- server

const openServerStreams = new Set<{ drain(): void }>();

/**
 * Every multiplexed stream this process serves answers what it has read and ends (called by
 * startGrpcServer's close before the server shuts down, so streams do not hold a graceful shutdown).
 */
export function drainMultiplexedStreams(): void {
  for (const s of openServerStreams) s.drain();
}

/** A bidi-streaming handler that serves each envelope with the unary handler `h`. */
export function serveMultiplexed<Req, Res>(
  h: (request: Req, metadata: Metadata) => Promise<Res>,
  /** the failure as the caller gets it (mapped and logged once by the caller of this) */
  toError: (e: unknown) => { code?: status; details?: string; error: common.ErrorInfo | undefined },
) {
  return (call: ServerDuplexStream<MuxCall<Req>, MuxAnswer<Res>>): void => {
    let inFlight = 0;
    let draining = false;
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      openServerStreams.delete(stream);
      call.end();
    };
    const stream = {
      drain: () => {
        draining = true;
        if (inFlight === 0) end();
      },
    };
    openServerStreams.add(stream);
    const answer = (a: MuxAnswer<Res>) => {
      inFlight--;
      if (!ended && !call.destroyed) call.write(a);
      if (draining && inFlight === 0) end();
    };
    call.on('data', (m: MuxCall<Req>) => {
      // read after a drain began: left unanswered, the client sends it again on another stream
      if (draining || ended) return;
      inFlight++;
      const md = new Metadata();
      for (const k in m.metadata) md.set(k, m.metadata[k]);
      h(m.request as Req, md).then(
        (response) => answer({ call_id: m.call_id, response, error: undefined }),
        (e: unknown) => {
          const { code, details, error } = toError(e);
          answer({ call_id: m.call_id, response: undefined, error: { status: code ?? status.INTERNAL, details: details ?? 'internal error', error } });
        },
      );
    });
    call.on('end', () => (inFlight === 0 ? end() : (draining = true)));
    call.on('error', () => {
      ended = true;
      openServerStreams.delete(stream);
    });
    call.on('close', () => openServerStreams.delete(stream));
  };
}

// ---------------------------------------------------------------- client

interface Pending<Req, Res> {
  message: MuxCall<Req>;
  resolve: (r: Res) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
  /** written on a stream (not still waiting for the channel) */
  sent: boolean;
}

interface OpenStream<Req> {
  write(m: MuxCall<Req>): void;
  end(): void;
  pending: Set<number>;
  openedAt: number;
  /** takes no new calls; ended once its pending calls are answered */
  retired: boolean;
}

export interface MultiplexedClientOptions {
  peer: string;
  deadlineMs: number;
  /** streams kept open per client (calls are spread round-robin; with a round-robin balancer they land on different replicas) */
  streams?: number;
  /**
   * a stream older than this takes no new calls and ends once its calls are answered, and a new one is
   * opened: replicas that joined since get their share (as a unary call would pick them at once)
   */
  maxStreamAgeMs?: number;
  fromError: (e: { status: number; details: string; error: common.ErrorInfo | undefined }) => AppError;
  /** createClient's readyGate: a call that finds the channel in TRANSIENT_FAILURE waits a moment for a reconnect */
  readyGate?: (deadlineMs: number) => Promise<void> | undefined;
  /** is the channel to the peer connected now? (a deadline on a connected channel is overload, not absence) */
  connected?: () => boolean;
}

/** Unary-shaped calls of one multiplexed method of `raw`. */
export class MultiplexedClient<Req, Res> {
  private readonly slots: (OpenStream<Req> | undefined)[];
  private next = 0;
  private lastId = 0;
  private readonly pending = new Map<number, Pending<Req, Res>>();
  private closed = false;

  constructor(
    private readonly raw: Client,
    private readonly method: string,
    private readonly o: MultiplexedClientOptions,
  ) {
    this.slots = new Array(Math.max(1, o.streams ?? 2)).fill(undefined);
  }

  call(request: Req, options: { deadlineMs?: number; metadata?: Metadata } = {}): Promise<Res> {
    if (this.closed) return Promise.reject(new DependencyUnavailableError(`${this.o.peer} is unreachable`));
    return new Promise<Res>((resolve, reject) => {
      const callId = ++this.lastId;
      const metadata: { [key: string]: string } = {};
      if (options.metadata) for (const [k, v] of Object.entries(options.metadata.getMap())) if (typeof v === 'string') metadata[k] = v;
      const deadlineMs = options.deadlineMs ?? this.o.deadlineMs;
      const timer = setTimeout(() => this.settle(callId, (p) => reject(this.deadlineError(p))), deadlineMs);
      this.pending.set(callId, { message: { call_id: callId, request, metadata }, resolve, reject, timer, sent: false });
      const waiting = this.o.readyGate?.(deadlineMs);
      if (waiting) void waiting.then(() => this.send(callId));
      else this.send(callId);
    });
  }

  /** A call past its deadline: sent on an open stream of a connected channel, the peer is slow; else it is not there. */
  private deadlineError(p: Pending<Req, Res>): Error {
    if (p.sent && this.o.connected?.()) {
      return overloadedPeer(this.o.peer);
    }
    return new DependencyUnavailableError(`${this.o.peer} is unreachable (deadline exceeded)`);
  }

  close(): void {
    this.closed = true;
    for (const s of this.slots) s?.end();
    for (const id of [...this.pending.keys()]) this.settle(id, (p) => p.reject(new DependencyUnavailableError(`${this.o.peer} is unreachable`)));
  }

  private send(callId: number): void {
    const p = this.pending.get(callId);
    if (!p) return;
    const slot = this.next;
    this.next = (this.next + 1) % this.slots.length;
    let s = this.slots[slot];
    if (s && Date.now() - s.openedAt > (this.o.maxStreamAgeMs ?? 30_000)) {
      s.retired = true;
      if (!s.pending.size) s.end();
      s = undefined;
    }
    s ??= this.slots[slot] = this.open(slot);
    s.pending.add(callId);
    p.sent = true;
    s.write(p.message);
  }

  private settle(callId: number, f: (p: Pending<Req, Res>) => void): void {
    const p = this.pending.get(callId);
    if (!p) return;
    this.pending.delete(callId);
    clearTimeout(p.timer);
    f(p);
  }

  private open(slot: number): OpenStream<Req> {
    const pending = new Set<number>();
    const duplex = (this.raw as unknown as Record<string, (md: Metadata) => import('@grpc/grpc-js').ClientDuplexStream<MuxCall<Req>, MuxAnswer<Res>>>)[this.method](new Metadata());
    const s: OpenStream<Req> = { write: (m) => duplex.write(m), end: () => duplex.end(), pending, openedAt: Date.now(), retired: false };
    let done = false;
    const finish = (clean: boolean) => {
      if (done) return;
      done = true;
      if (this.slots[slot] === s) this.slots[slot] = undefined;
      s.retired = true;
      const left = [...pending];
      pending.clear();
      for (const id of left) {
        // ended cleanly by a draining server: never handled, so sent again; otherwise unknown, so failed
        if (clean && !this.closed) this.send(id);
        else this.settle(id, (p) => p.reject(new DependencyUnavailableError(`${this.o.peer} is unreachable`)));
      }
    };
    duplex.on('data', (a: MuxAnswer<Res>) => {
      pending.delete(a.call_id);
      if (s.retired && !pending.size) s.end();
      this.settle(a.call_id, (p) => (a.error ? p.reject(this.o.fromError(a.error)) : p.resolve(a.response as Res)));
    });
    duplex.on('status', (st: { code: status }) => finish(st.code === status.OK));
    duplex.on('error', (_e: ServiceError) => finish(false));
    return s;
  }
}
