/**
 * One rule for every input at the edge, before any route sees it (docs/reliability.md, "Input rules at
 * the edge"):
 * - no string anywhere (JSON body values and keys, query values, path) may hold a NUL character or a lone
 *   UTF-16 surrogate: Postgres refuses both, and no tool, name or note needs them;
 * - a JSON body nests at most MAX_JSON_DEPTH (32) objects/arrays: deeper documents overflow recursive
 *   validators and break the clients that read them back;
 * - no JSON key may be `__proto__` (a prototype-pollution vector in any merge, never a legitimate name).
 * The walk is iterative, so a hostile document cannot overflow the stack here. A violation is a 422 with
 * the `loc` of the first offending value.
 */
import type { NextFunction, Request, Response } from 'express';
import { InputError } from '@agw/shared';

export const MAX_JSON_DEPTH = 32;

// a NUL, or a high surrogate not followed by a low one, or a low surrogate not preceded by a high one
const FORBIDDEN = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function badText(s: string): string | undefined {
  const m = FORBIDDEN.exec(s);
  if (!m) return undefined;
  return m[0] === '\u0000' ? 'must not contain a NUL character (\\u0000)' : 'must not contain an unpaired UTF-16 surrogate';
}

/** A value waiting in the walk: its key under its parent (loc is only built for a violation). */
interface Pending {
  v: unknown;
  key: string | number | undefined;
  parent: Pending | undefined;
  depth: number;
}

function locOf(p: Pending | undefined, base: (string | number)[], extra?: string): (string | number)[] {
  const keys: (string | number)[] = extra === undefined ? [] : [extra];
  for (let n = p; n?.key !== undefined; n = n.parent) keys.push(n.key);
  return [...base, ...keys.reverse()];
}

/** The first violation in a parsed JSON document, as [loc, msg, type]. */
export function checkJson(root: unknown, base: (string | number)[] = ['body']): [(string | number)[], string, string] | undefined {
  const stack: Pending[] = [{ v: root, key: undefined, parent: undefined, depth: 0 }];
  while (stack.length) {
    const node = stack.pop()!;
    const { v, depth } = node;
    if (typeof v === 'string') {
      const msg = badText(v);
      if (msg) return [locOf(node, base), msg, 'string_invalid'];
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    if (depth + 1 > MAX_JSON_DEPTH) return [locOf(node, base), `nested deeper than ${MAX_JSON_DEPTH} levels`, 'too_deep'];
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ v: v[i], key: i, parent: node, depth: depth + 1 });
      continue;
    }
    const keys = Object.keys(v);
    for (let i = keys.length - 1; i >= 0; i--) {
      const k = keys[i];
      if (k === '__proto__') return [locOf(node, base, k), 'the key __proto__ is not allowed', 'key_invalid'];
      const msg = badText(k);
      if (msg) return [locOf(node, base, k), `key ${msg}`, 'key_invalid'];
      stack.push({ v: (v as Record<string, unknown>)[k], key: k, parent: node, depth: depth + 1 });
    }
  }
  return undefined;
}

export function inputGuard(req: Request, _res: Response, next: NextFunction): void {
  let path: string;
  try {
    path = decodeURIComponent(req.path);
  } catch {
    throw InputError.at(['path'], 'invalid percent-encoding in the path', 'path_invalid');
  }
  const pathMsg = badText(path);
  if (pathMsg) throw InputError.at(['path'], pathMsg, 'string_invalid');
  const query = checkJson(req.query, ['query']);
  if (query) throw InputError.at(...query);
  if (req.body !== undefined) {
    const body = checkJson(req.body);
    if (body) throw InputError.at(...body);
  }
  next();
}
