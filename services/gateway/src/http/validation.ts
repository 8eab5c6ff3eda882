/** zod schemas to the spec's 422 shape: `detail: [{loc: ['body', 'agent_id'], msg, type}]`. */
import { InputError, type ValidationIssue } from '@agw/shared';
import type { z } from 'zod';

export function issuesOf(error: z.ZodError, root: 'body' | 'query' | 'path'): ValidationIssue[] {
  return error.issues.map((i) => {
    let loc: (string | number)[] = [root, ...i.path.map((p) => (typeof p === 'symbol' ? String(p) : p))];
    // a missing required key is reported at the key (zod reports it with the key in the path already)
    const type = i.code === 'invalid_type' && /received undefined/.test(i.message) ? 'missing' : i.code;
    if (i.code === 'unrecognized_keys') loc = [...loc, ...(i as { keys: string[] }).keys.slice(0, 1)];
    return { loc, msg: type === 'missing' ? 'Field required' : i.message, type };
  });
}

/** Parse `value` with `schema` or throw a 422 InputError. */
export function parseWith<T extends z.ZodType>(schema: T, value: unknown, root: 'body' | 'query' | 'path'): z.output<T> {
  const r = schema.safeParse(value === undefined && root === 'body' ? undefined : value);
  if (!r.success) throw new InputError(issuesOf(r.error, root));
  return r.data;
}
