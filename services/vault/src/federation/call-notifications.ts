/**
 * What an upstream sends during a federated tools/call that the caller relays to its MCP client
 * (docs/mcp.md, "Inside a call"): its `notifications/progress` and `notifications/message` (log).
 * Bounded, so that a hostile upstream can neither flood the client nor read a secret back:
 * - at most MAX_RELAYED_NOTIFICATIONS per call (the rest are dropped and counted);
 * - every string masked with the connection's secrets (secret-masker.ts, as results are), then clipped to
 *   MAX_NOTIFICATION_TEXT bytes; a log message's data whose JSON is longer becomes that JSON, clipped;
 * - a log message below the level the client asked for is not relayed; a malformed notification is dropped.
 *
 * Which call a log message belongs to: the SDK's client hands a connection's notifications to one handler,
 * whichever request they came with. The handler runs in the async context of the request whose response
 * stream carried the notification, so `relayOfCurrentCall()` (AsyncLocalStorage) finds that call's relay;
 * a notification outside any relayed call (a 2025 session's standalone stream) finds none and is dropped.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { type Json, MCP_LOG_LEVELS, type McpLogLevel, isMcpLogLevel, toJson } from '@agw/shared';
import type { SecretMasker } from '../secrets/secret-masker';

/** notifications relayed per call at most */
export const MAX_RELAYED_NOTIFICATIONS = 1000;
/** bytes of a relayed text (a progress message, a logger name, a log message's data as JSON) at most */
export const MAX_NOTIFICATION_TEXT = 4096;

export type CallNotification =
  | { kind: 'progress'; progress: number; total?: number; message?: string }
  | { kind: 'log'; level: McpLogLevel; logger?: string; /** its data (masked, clipped) */ data: Json };

/** What the caller of a tools/call wants relayed, and where to (CallRound.notifications). */
export interface NotificationWish {
  /** the MCP client asked for progress (a progressToken) */
  progress: boolean;
  /** relay log messages at this level and above; undefined: none */
  logLevel?: McpLogLevel;
  send(n: CallNotification): void;
}

/**
 * `text` cut to at most `max` UTF-8 bytes, never inside a character (a code point cut in half is dropped).
 * Only the first `max` UTF-16 units are encoded (they hold at least `max` bytes): a huge text costs as
 * much as a short one.
 */
export function clipUtf8(text: string, max = MAX_NOTIFICATION_TEXT): string {
  if (text.length <= max / 3 || Buffer.byteLength(text) <= max) return text;
  const head = Buffer.from(text.slice(0, max)).subarray(0, max);
  // a cut inside a multi-byte sequence decodes to U+FFFD: drop exactly that incomplete tail
  let end = head.length;
  let start = end - 1;
  while (start > 0 && start > end - 4 && (head[start] & 0xc0) === 0x80) start--;
  const lead = head[start];
  const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  if (end - start < need) end = start;
  return head.subarray(0, end).toString('utf8');
}

const finite = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** The relay of one call: bounds, masks and forwards what its upstream sends. */
export class NotificationRelay {
  private relayed = 0;
  /** notifications over the cap, not relayed */
  dropped = 0;

  constructor(
    private readonly wish: NotificationWish,
    /** the connection's masker now (it grows as requests carry new secrets) */
    private readonly masker: () => SecretMasker,
  ) {}

  get wantsProgress(): boolean {
    return this.wish.progress;
  }

  get logLevel(): McpLogLevel | undefined {
    return this.wish.logLevel;
  }

  /** An upstream's progress (the params of its notifications/progress, its own token left out). */
  progress(p: { progress?: unknown; total?: unknown; message?: unknown }): void {
    if (!this.wish.progress || !finite(p.progress) || this.full()) return;
    this.emit({
      kind: 'progress',
      progress: p.progress,
      ...(finite(p.total) ? { total: p.total } : {}),
      ...(typeof p.message === 'string' ? { message: this.text(p.message) } : {}),
    });
  }

  /** An upstream's log message (the params of its notifications/message). */
  log(p: { level?: unknown; logger?: unknown; data?: unknown }): void {
    const min = this.wish.logLevel;
    if (min === undefined || !isMcpLogLevel(p.level) || MCP_LOG_LEVELS.indexOf(p.level) < MCP_LOG_LEVELS.indexOf(min) || this.full()) return;
    const json = toJson(this.masker().value(p.data ?? null)) ?? { text: 'null' };
    this.emit({
      kind: 'log',
      level: p.level,
      ...(typeof p.logger === 'string' ? { logger: this.text(p.logger) } : {}),
      data: Buffer.byteLength(json.text) <= MAX_NOTIFICATION_TEXT ? json : toJson(clipUtf8(json.text))!,
    });
  }

  private text(s: string): string {
    return clipUtf8(this.masker().text(s));
  }

  /** Whether the call's cap is reached: the notification is counted as dropped before any masking or encoding. */
  private full(): boolean {
    if (this.relayed < MAX_RELAYED_NOTIFICATIONS) return false;
    this.dropped++;
    return true;
  }

  private emit(n: CallNotification): void {
    this.relayed++;
    this.wish.send(n);
  }
}

const current = new AsyncLocalStorage<NotificationRelay>();

/** Runs `fn` (a tools/call to the upstream) with `relay` as the one its notifications go to. */
export function withRelay<T>(relay: NotificationRelay | undefined, fn: () => Promise<T>): Promise<T> {
  return relay ? current.run(relay, fn) : fn();
}

/** The relay of the call whose request the running notification handler came with, if it relays any. */
export function relayOfCurrentCall(): NotificationRelay | undefined {
  return current.getStore();
}
