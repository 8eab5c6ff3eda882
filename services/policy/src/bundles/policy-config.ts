/**
 * policy_config overrides: validated against the template's declared parameter types (from its Rego
 * `parameters`), merged over the tenant's current overrides (a key set to null goes back to the default).
 */
import { InputError, type ValidationIssue } from '@agw/shared';
import type { LoadedTemplate, TemplateParameter } from '../templates/template-catalog';

const LOC = ['policy_config'];

/**
 * Numeric template parameters are counts, limits, amounts and thresholds: never negative, and within a
 * range a policy can use (1e308 was accepted and compared as Infinity). A declaration may narrow them
 * with `minimum` / `maximum`.
 */
export const NUMERIC_LIMITS = { integer: 1_000_000_000, number: 1e15 } as const;

function rangeIssue(p: TemplateParameter, v: number): string | undefined {
  if (p.type !== 'integer' && p.type !== 'number') return undefined;
  const min = p.minimum ?? 0;
  const max = p.maximum ?? NUMERIC_LIMITS[p.type];
  if (v < min || v > max) return `must be between ${min} and ${max}`;
  return undefined;
}

function typeOk(type: TemplateParameter['type'], v: unknown): boolean {
  switch (type) {
    case 'integer':
      return typeof v === 'number' && Number.isSafeInteger(v);
    case 'number':
      return typeof v === 'number' && Number.isFinite(v);
    case 'boolean':
      return typeof v === 'boolean';
    case 'string':
      return typeof v === 'string';
    case 'string[]':
      return Array.isArray(v) && v.every((x) => typeof x === 'string');
    case 'object':
      return typeof v === 'object' && v !== null && !Array.isArray(v);
    default:
      return false;
  }
}

/** Parse the JSON object of a policy_config patch. */
export function parseConfigPatch(json: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(json);
  } catch {
    throw InputError.at(LOC, 'policy_config must be a JSON object', 'json_invalid');
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw InputError.at(LOC, 'policy_config must be an object', 'object_type');
  return v as Record<string, unknown>;
}

/**
 * New overrides: `current` with `patch` applied (null removes a key). With a template, every key must be
 * one of its parameters with the declared type; a custom policy takes any JSON values.
 */
export function applyConfigPatch(template: LoadedTemplate | undefined, current: Record<string, unknown>, patch: Record<string, unknown>): Record<string, unknown> {
  const issues: ValidationIssue[] = [];
  const next: Record<string, unknown> = { ...current };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) {
      delete next[key];
      continue;
    }
    if (template) {
      const p = template.parameters.find((x) => x.name === key);
      if (!p) {
        issues.push({ loc: [...LOC, key], msg: `unknown parameter of template ${template.name} (known: ${template.parameters.map((x) => x.name).join(', ')})`, type: 'extra_forbidden' });
        continue;
      }
      if (!typeOk(p.type, value)) {
        issues.push({ loc: [...LOC, key], msg: `must be of type ${p.type}`, type: `${p.type.replace('[]', '_array')}_type` });
        continue;
      }
      const range = rangeIssue(p, value as number);
      if (range) {
        issues.push({ loc: [...LOC, key], msg: range, type: 'out_of_range' });
        continue;
      }
    }
    next[key] = value;
  }
  if (issues.length) throw new InputError(issues);
  return next;
}

/** Template defaults with the overrides merged over them (objects merge key by key, as Rego's object.union). */
export function effectiveConfig(defaults: Record<string, unknown>, overrides: Record<string, unknown>): Record<string, unknown> {
  return deepMerge(defaults, overrides) as Record<string, unknown>;
}

function deepMerge(a: unknown, b: unknown): unknown {
  const isObj = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);
  if (!isObj(a) || !isObj(b)) return b === undefined ? a : b;
  const out: Record<string, unknown> = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = deepMerge(a[k], v);
  return out;
}
