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

/** The first violation in a parsed JSON document, as [loc, msg, type]. */
export function checkJson(root: unknown, base: (string | number)[] = ['body']): [(string | number)[], string, string] | undefined {
  const stack: Array<{ v: unknown; loc: (string | number)[]; depth: number }> = [{ v: root, loc: base, depth: 0 }];
  while (stack.length) {
    const { v, loc, depth } = stack.pop()!;
    if (typeof v === 'string') {
      const msg = badText(v);
      if (msg) return [loc, msg, 'string_invalid'];
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    if (depth + 1 > MAX_JSON_DEPTH) return [loc, `nested deeper than ${MAX_JSON_DEPTH} levels`, 'too_deep'];
    const entries: Array<[string | number, unknown]> = Array.isArray(v) ? v.map((x, i) => [i, x]) : Object.entries(v);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [k, x] = entries[i];
      if (typeof k === 'string') {
        if (k === '__proto__') return [[...loc, k], 'the key __proto__ is not allowed', 'key_invalid'];
        const msg = badText(k);
        if (msg) return [[...loc, k], `key ${msg}`, 'key_invalid'];
      }
      stack.push({ v: x, loc: [...loc, k], depth: depth + 1 });
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
