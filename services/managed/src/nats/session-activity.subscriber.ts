/**
 * NATS adapter: a plain (non-durable) subscription to the fleet's session-bound decision subjects
 * (`decisions.*.*.session` and `nohook.decisions.*.*.session`: only decisions with a session_id are published
 * there), so a governed call
 * of a managed session counts as activity for its event consumer (the SSE_TIMEOUT idle clock) and
 * re-attaches a consumer that had stopped idle, and a human decision on a platform confirmation request is
 * delivered to the platform at once. Nothing here is a source of truth (the totals come from the audit log,
 * and the confirmation sweep delivers what a missed message would have), so a missed message costs only
 * time.
 */
import { type Bus, type DecisionEvent, DecisionEventSchema, type Logger, subjects } from '@agw/shared';

export function subscribeSessionActivity(bus: Bus, onDecision: (e: DecisionEvent & { session_id: string }) => void, logger: Logger): { stop(): void } {
  const dec = new TextDecoder();
  const subs = subjects.sessionDecisions(bus.prefix).map((subject) => {
    const sub = bus.nc.subscribe(subject);
    void (async () => {
      for await (const m of sub) {
        const e = DecisionEventSchema.safeParse(safeParse(dec.decode(m.data)));
        if (e.success && e.data.session_id) onDecision(e.data as DecisionEvent & { session_id: string });
      }
    })().catch((e) => logger.warn({ reason: (e as Error).message, subject }, 'session activity subscription ended'));
    return sub;
  });
  return { stop: () => subs.forEach((sub) => sub.unsubscribe()) };
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
