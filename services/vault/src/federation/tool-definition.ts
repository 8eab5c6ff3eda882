/**
 * What of an upstream tool is pinned (docs/federation.md, "Pinned definitions"): its name, title,
 * description, input and output schemas and annotations, nothing else (`_meta`, `icons`, `execution` may
 * change freely). Its fingerprint is the SHA-256 of its RFC 8785 canonical JSON, the same canonical form as
 * the audit chain's, so anyone can recompute it with any JCS implementation. The diff between two
 * definitions is one entry per changed JSON leaf, in the path notation the poisoning scanner uses too.
 */
import { canonicalJson, sha256Hex } from '@agw/shared';

export interface ToolDefinition {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
}

/** One changed leaf: only `after` when added, only `before` when removed. */
export interface DefinitionChange {
  path: string;
  before?: unknown;
  after?: unknown;
}

const MAX_CHANGES = 200;
const MAX_TEXT = 2000;

export const isJsonObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The pinned fields of a tool as tools/list gives it; every other field is dropped. */
export function pinnedForm(tool: unknown): ToolDefinition {
  const t = isJsonObject(tool) ? tool : {};
  const def: ToolDefinition = { name: typeof t.name === 'string' ? t.name : '', inputSchema: isJsonObject(t.inputSchema) ? t.inputSchema : { type: 'object' } };
  if (typeof t.title === 'string') def.title = t.title;
  if (typeof t.description === 'string') def.description = t.description;
  if (isJsonObject(t.outputSchema)) def.outputSchema = t.outputSchema;
  if (isJsonObject(t.annotations)) def.annotations = t.annotations;
  return def;
}

/** SHA-256 (hex) of the RFC 8785 canonical JSON of the pinned form: key order and `_meta` do not count. */
export function definitionSha256(def: ToolDefinition): string {
  return sha256Hex(canonicalJson(pinnedForm(def)));
}

/** `base` extended by one step: `.key` for an identifier-like key, `["odd key"]` otherwise, `[3]` for an index. */
export function pathJoin(base: string, key: string | number): string {
  if (typeof key === 'number') return `${base}[${key}]`;
  if (/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key)) return base ? `${base}.${key}` : key;
  return `${base}[${JSON.stringify(key)}]`;
}

/** The first `max` code points of `text` (never half of a surrogate pair, which jsonb would refuse). */
export function clipText(text: string, max: number, ellipsis = '…'): string {
  if (text.length <= max) return text;
  const points = Array.from(text);
  return points.length <= max ? text : `${points.slice(0, max).join('')}${ellipsis}`;
}

/** `v` with every string in it clipped to MAX_TEXT code points. */
function clip(v: unknown): unknown {
  if (typeof v === 'string') return clipText(v, MAX_TEXT);
  if (Array.isArray(v)) return v.map(clip);
  if (isJsonObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, clip(x)]));
  return v;
}

const byPath = (a: DefinitionChange, b: DefinitionChange) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);

/**
 * pinned -> candidate, one entry per changed leaf, sorted by path, at most 200; arrays are compared by
 * index. Without a pinned definition (`before` null), one entry per top-level field of `after`.
 */
export function definitionDiff(before: ToolDefinition | null, after: ToolDefinition): DefinitionChange[] {
  const out: DefinitionChange[] = [];
  if (before === null) {
    for (const [k, v] of Object.entries(pinnedForm(after))) out.push({ path: k, after: clip(v) });
  } else {
    walk(pinnedForm(before), pinnedForm(after), '', out);
  }
  return out.sort(byPath).slice(0, MAX_CHANGES);
}

/** Keys in sorted order, so that the walk (and where a huge diff is cut) does not depend on key order. */
function walk(a: unknown, b: unknown, path: string, out: DefinitionChange[]): void {
  if (out.length >= 10 * MAX_CHANGES) return;
  if (isJsonObject(a) && isJsonObject(b)) {
    for (const k of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
      const p = pathJoin(path, k);
      if (b[k] === undefined) {
        if (a[k] !== undefined) out.push({ path: p, before: clip(a[k]) });
      } else if (a[k] === undefined) out.push({ path: p, after: clip(b[k]) });
      else walk(a[k], b[k], p, out);
    }
    return;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
      const p = pathJoin(path, i);
      if (i >= b.length) out.push({ path: p, before: clip(a[i]) });
      else if (i >= a.length) out.push({ path: p, after: clip(b[i]) });
      else walk(a[i], b[i], p, out);
    }
    return;
  }
  if (!sameJson(a, b)) out.push({ path, before: clip(a), after: clip(b) });
}

const sameJson = (a: unknown, b: unknown): boolean => a === b || (a !== undefined && b !== undefined && canonicalJson(a) === canonicalJson(b));
