/**
 * An upstream tool's definition as the federation keeps it (docs/federation.md, "Pinned definitions"):
 * the whole object the upstream listed, every field (`title`, `description`, `inputSchema`,
 * `outputSchema`, `annotations`, `execution`, `icons`, `_meta`, and any field a later revision adds) in
 * the upstream's own key order at every level, so that tools/list gives it back as the upstream wrote it.
 * All of it is pinned: its fingerprint is the SHA-256 of its RFC 8785 canonical JSON (key order does not
 * count), the same canonical form as the audit chain's, so anyone can recompute it with any JCS
 * implementation, and a changed `execution`, `icons` or `_meta` is a changed definition. The diff between
 * two definitions is one entry per changed JSON leaf, in the path notation the poisoning scanner uses too.
 *
 * Pins made before the whole definition was pinned covered six fields only (`LEGACY_FIELDS`): such a pin
 * still matches a definition whose six fields are unchanged (`legacyDefinitionSha256`), and the first read
 * that finds it so pins the whole definition (tool-pinning.ts).
 */
import { type McpToolDefinition, canonicalJson, sha256Hex } from '@agw/shared';

/** A definition the federation keeps always has its name. */
export interface ToolDefinition extends McpToolDefinition {
  name: string;
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

/**
 * The definition of a tool as tools/list gives it: the object itself, every field in its order. Only a
 * definition without a string `name` or an object `inputSchema` (never one a listing validated) is
 * completed: `""` and `{"type": "object"}`, at the position the field had.
 */
export function definitionOf(tool: unknown): ToolDefinition {
  const t = isJsonObject(tool) ? tool : {};
  if (typeof t.name === 'string' && isJsonObject(t.inputSchema)) return t as ToolDefinition;
  return { ...t, name: typeof t.name === 'string' ? t.name : '', inputSchema: isJsonObject(t.inputSchema) ? t.inputSchema : { type: 'object' } };
}

/** The fields a pin covered before the whole definition was pinned. */
export const LEGACY_FIELDS: readonly string[] = ['name', 'title', 'description', 'inputSchema', 'outputSchema', 'annotations'];

/** The six fields of a tool that pins used to cover (every other field dropped): only for pins made then. */
export function legacyPinnedForm(tool: unknown): ToolDefinition {
  const t = isJsonObject(tool) ? tool : {};
  const def: ToolDefinition = { name: typeof t.name === 'string' ? t.name : '', inputSchema: isJsonObject(t.inputSchema) ? t.inputSchema : { type: 'object' } };
  if (typeof t.title === 'string') def.title = t.title;
  if (typeof t.description === 'string') def.description = t.description;
  if (isJsonObject(t.outputSchema)) def.outputSchema = t.outputSchema;
  if (isJsonObject(t.annotations)) def.annotations = t.annotations;
  return def;
}

/** Whether a stored definition is one a legacy pin kept (none of its fields outside LEGACY_FIELDS). */
export function isLegacyForm(stored: unknown): boolean {
  return isJsonObject(stored) && Object.keys(stored).every((k) => LEGACY_FIELDS.includes(k));
}

/** SHA-256 (hex) of the RFC 8785 canonical JSON of the whole definition: key order does not count, every field does. */
export function definitionSha256(def: unknown): string {
  return sha256Hex(canonicalJson(definitionOf(def)));
}

/** The fingerprint a pin made before the whole definition was pinned has for this definition (its six fields). */
export function legacyDefinitionSha256(def: unknown): string {
  return sha256Hex(canonicalJson(legacyPinnedForm(def)));
}

/** A tool's `execution.taskSupport` (2025-11-25); absent or unknown is "forbidden", the spec's default. */
export type TaskSupport = 'forbidden' | 'optional' | 'required';

export function taskSupportOf(def: unknown): TaskSupport {
  const execution = isJsonObject(def) ? def.execution : undefined;
  const v = isJsonObject(execution) ? execution.taskSupport : undefined;
  return v === 'optional' || v === 'required' ? v : 'forbidden';
}

/**
 * The definition as the gateway offers it: the gateway runs no task-augmented call on an upstream, so a
 * tool that supports tasks optionally is offered with `execution.taskSupport: "forbidden"` (in the place
 * the field had; every other field as it was). A tool that requires tasks is not offered at all.
 */
export function offeredForm(def: ToolDefinition): ToolDefinition {
  if (taskSupportOf(def) !== 'optional') return def;
  const execution = def.execution as Record<string, unknown>;
  return { ...def, execution: { ...execution, taskSupport: 'forbidden' } };
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
  // walks the first `max` code points only: a 60 KB description costs as much as a short one
  let end = 0;
  for (let n = 0; n < max && end < text.length; n++) end += (text.codePointAt(end) as number) > 0xffff ? 2 : 1;
  return end >= text.length ? text : `${text.slice(0, end)}${ellipsis}`;
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
    for (const [k, v] of Object.entries(definitionOf(after))) out.push({ path: k, after: clip(v) });
  } else {
    walk(definitionOf(before), definitionOf(after), '', out);
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
