/**
 * The one codec of an error's `detail` across a gRPC hop (agw.common.v1.ErrorInfo's `detail` oneof): what the
 * client sees as `detail` is a text or, for invalid input, a list of validation issues `{loc, msg, type}`;
 * each has a message of its own (`text`, `issues`), so no JSON text crosses. grpc.ts builds and reads
 * ErrorInfo with these two functions only.
 */
import type { common } from '@agw/proto';
import type { ValidationIssue } from './errors';

/** The detail fields of ErrorInfo (`detail_json`: the previous release's form, docs/architecture.md "Changing a contract"). */
export type WireDetail = Pick<common.ErrorInfo, 'text' | 'issues' | 'detail_json'>;

const isIssue = (i: unknown): i is ValidationIssue => {
  const x = i as ValidationIssue | null;
  return !!x && typeof x === 'object' && Array.isArray(x.loc) && x.loc.every((p) => typeof p === 'string' || typeof p === 'number') && typeof x.msg === 'string' && typeof x.type === 'string';
};

/** A loc part as the message holds it: a list index (an int32) or a key (anything else, as its text). */
const partOf = (p: string | number): common.LocationPart => (typeof p === 'number' && Number.isInteger(p) && Math.abs(p) <= 0x7fffffff ? { index: p } : { key: String(p) });

/**
 * An AppError's `detail` as ErrorInfo carries it: a string as `text`, a list of validation issues as `issues`.
 * Any other detail (an object an edge answers with itself, e.g. the gateway's rate-limit body) does not cross
 * a hop: its `message` stands in, as text.
 */
export function detailToWire(detail: unknown, message: string): WireDetail {
  // the previous release reads its JSON text (a rolling update); removed in the next release
  const detail_json = JSON.stringify(detail ?? null);
  if (typeof detail === 'string') return { text: detail, detail_json };
  if (Array.isArray(detail) && detail.every(isIssue)) {
    return { issues: { issues: detail.map((i) => ({ loc: i.loc.map(partOf), msg: i.msg, type: i.type })) }, detail_json };
  }
  return { text: message, detail_json: JSON.stringify(message) };
}

/**
 * The client's `detail` from ErrorInfo: its text, its validation issues, the previous release's JSON text when
 * only that is set (a peer not yet updated: a string or a list of issues), or the message.
 */
export function detailFromWire(info: WireDetail & Pick<common.ErrorInfo, 'message'>): string | ValidationIssue[] {
  if (info.issues) return info.issues.issues.map((i) => ({ loc: i.loc.map((p) => (p.index !== undefined ? p.index : (p.key ?? ''))), msg: i.msg, type: i.type }));
  if (info.text !== undefined) return info.text;
  if (info.detail_json) {
    try {
      const d = JSON.parse(info.detail_json) as unknown;
      if (typeof d === 'string' || (Array.isArray(d) && d.every(isIssue))) return d as string | ValidationIssue[];
    } catch {
      /* not JSON: the message stands in */
    }
  }
  return info.message;
}
