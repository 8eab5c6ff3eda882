/**
 * What of an upstream tool is pinned (docs/federation.md, "Pinned definitions"): its name, title,
 * description, input and output schemas and annotations, nothing else (`_meta`, `icons`, `execution` may
 * change freely). Its fingerprint is the SHA-256 of its RFC 8785 canonical JSON, the same canonical form as
 * the audit chain's; the diff between two definitions is one entry per changed JSON leaf.
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

export interface DefinitionChange {
  path: string;
  before?: unknown;
  after?: unknown;
}

const MAX_CHANGES = 200;
const MAX_TEXT = 2000;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The pinned fields of a tool as tools/list gives it; unknown fields are dropped. */
export function pinnedForm(tool: unknown): ToolDefinition {
  const t = isObject(tool) ? tool : {};
  const def: ToolDefinition = { name: typeof t.name === 'string' ? t.name : '', inputSchema: isObject(t.inputSchema) ? t.inputSchema : { type: 'object' } };
  if (typeof t.title === 'string') def.title = t.title;
  if (typeof t.description === 'string') def.description = t.description;
  if (isObject(t.outputSchema)) def.outputSchema = t.outputSchema;
  if (isObject(t.annotations)) def.annotations = t.annotations;
  return def;
}

export function definitionSha256(def: ToolDefinition): string {
  return sha256Hex(canonicalJson(pinnedForm(def)));
}

/** A JSON path segment: `.key`, `["odd key"]` or `[3]`. */
export function pathJoin(base: string, key: string | number): string {
  if (typeof key === 'number') return `${base}[${key}]`;
  if (/^[A-Za-z_$][A-Za-z0-9_$-]*$/.test(key)) return base ? `${base}.${key}` : key;
  return `${base}[${JSON.stringify(key)}]`;
}

const clip = (v: unknown): unknown => (typeof v === 'string' && v.length > MAX_TEXT ? `${v.slice(0, MAX_TEXT)}…` : v);

/** pinned → candidate, one entry per changed leaf (sorted by path, at most 200). */
export function definitionDiff(before: ToolDefinition | null, after: ToolDefinition): DefinitionChange[] {
  const out: DefinitionChange[] = [];
  if (!before) {
    for (const [k, v] of Object.entries(pinnedForm(after))) out.push({ path: k, after: clip(v) });
  } else {
    walk(pinnedForm(before), pinnedForm(after), '', out);
  }
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)).slice(0, MAX_CHANGES);
}

function walk(a: unknown, b: unknown, path: string, out: DefinitionChange[]): void {
  if (out.length > 10 * MAX_CHANGES) return;
  if (isObject(a) && isObject(b)) {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
      const p = pathJoin(path, k);
      if (!(k in b)) out.push({ path: p, before: clip(a[k]) });
      else if (!(k in a)) out.push({ path: p, after: clip(b[k]) });
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
  if (canonicalJson(a) !== canonicalJson(b)) out.push({ path, before: clip(a), after: clip(b) });
}
