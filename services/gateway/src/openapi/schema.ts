/**
 * zod schemas to OpenAPI 3.1 (JSON Schema 2020-12), one source for validation, responses and the
 * document. A schema given an id (`.meta({ id: 'AuditRecord' })`) becomes `components/schemas/<id>` and is
 * referenced with `$ref` wherever it is used; everything else is inlined.
 *
 * Responses: a handler sends its body with `reply(res, schema, body)`, typed `z.infer<typeof schema>`,
 * and the operation describes the same schema with `json(schema)`; so the document, the handler and the
 * generated client cannot drift (the e2e contract test checks every response the suite sees).
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { randomUUID } from 'node:crypto';
import type { Response } from 'express';
import { z } from 'zod';

/** components/schemas collected from every converted schema. */
export const componentSchemas: Record<string, unknown> = {};

const rewriteRefs = (v: unknown): unknown => {
  if (Array.isArray(v)) return v.map(rewriteRefs);
  if (v && typeof v === 'object') {
    return Object.fromEntries(
      Object.entries(v).map(([k, x]) => [k, k === '$ref' && typeof x === 'string' ? x.replace('#/$defs/', '#/components/schemas/') : rewriteRefs(x)]),
    );
  }
  return v;
};

/** The JSON Schema of `schema` (`io`: the request side accepts what parses, the response side is what is sent). */
export function jsonSchema(schema: z.ZodType, io: 'input' | 'output' = 'output'): Record<string, unknown> {
  const { $schema: _s, $defs, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  for (const [id, def] of Object.entries(($defs as Record<string, unknown>) ?? {})) componentSchemas[id] = rewriteRefs(def);
  return rewriteRefs(rest) as Record<string, unknown>;
}

/** A JSON response (or request) content map. */
export const json = (schema: z.ZodType, io: 'input' | 'output' = 'output') => ({ 'application/json': { schema: jsonSchema(schema, io) } });

/** A response of the operation: its description and JSON body schema. */
export const response = (description: string, schema: z.ZodType) => ({ description, content: json(schema) });

/** Send `body` (typed by the response schema the document describes) with `status`. */
export function reply<S extends z.ZodType>(res: Response, schema: S, body: z.infer<S>, status = 200): void {
  res.status(status).json(body);
}

type ItemOf<S extends z.ZodType, K extends keyof z.infer<S>> = NonNullable<z.infer<S>[K]> extends readonly (infer E)[] ? E : never;

/**
 * `reply` for a body with one long list (`field`, made from `items` by `present`): the JSON is written one item
 * per turn of the event loop. An upstream's tools may add up to megabytes of definitions, and one
 * `JSON.stringify` of them holds the gateway's loop, and every other tenant's call, for a few hundred
 * milliseconds (the fault suite's R9). The bytes parse to what `reply` sends, keys in the same order.
 */
export async function replyInTurns<S extends z.ZodType, K extends keyof z.infer<S> & string, I>(
  res: Response,
  schema: S,
  /** the body with `field` in its place (any value: the items replace it), so the keys keep their order */
  head: z.infer<S>,
  field: K,
  items: readonly I[],
  present: (item: I) => ItemOf<S, K>,
  status = 200,
): Promise<void> {
  // every item presented before a byte is written: an item that cannot be (a peer's malformed answer) is still
  // the whole answer's error status
  const presented: string[] = [];
  for (const [i, item] of items.entries()) {
    if (i > 0) await nextTurn();
    presented.push(JSON.stringify(present(item)));
  }
  // the list's place in the head's JSON: a marker no value of the head can spell (a random UUID)
  const marker = randomUUID();
  const text = JSON.stringify({ ...(head as Record<string, unknown>), [field]: marker });
  const at = text.indexOf(`"${marker}"`);
  res.status(status).type('application/json');
  res.write(`${text.slice(0, at)}[`);
  for (const [i, item] of presented.entries()) {
    if (i > 0) await nextTurn();
    res.write(i ? `,${item}` : item);
  }
  res.end(`]${text.slice(at + marker.length + 2)}`);
}

// ---- shared shapes ----------------------------------------------------------------------------------

/** Every error body: `{detail}`, a message (or, for a policy denial and some conflicts, an object). */
export const errorSchema = z
  .object({ detail: z.union([z.string(), z.record(z.string(), z.unknown()), z.array(z.unknown())]) })
  .meta({ id: 'Error', description: 'An error: `detail` is a message (an object for a policy denial, a list for a validation error)' });

export const validationIssueSchema = z
  .object({ loc: z.array(z.union([z.string(), z.number()])), msg: z.string(), type: z.string() })
  .meta({ id: 'ValidationIssue', description: 'Where (loc, e.g. ["body", "agent_id"]) and what (msg, type)' });

export const validationErrorSchema = z.object({ detail: z.array(validationIssueSchema) }).meta({ id: 'ValidationError', description: '422: every invalid field' });

export const tenantRateLimitSchema = z
  .object({ error: z.literal('rate_limit_exceeded'), tenant_id: z.string(), rate_limit_rps: z.number(), rate_limit_burst: z.number() })
  .meta({ id: 'RateLimitExceeded', description: "429 of the tenant's request rate (Retry-After in seconds)" });

/** 429: the tenant's rate (its own body), or a per-IP or session limit (`{detail}`); always with Retry-After. */
export const rateLimitedSchema = z.union([tenantRateLimitSchema, errorSchema]).meta({ id: 'RateLimited' });

/** Error responses by status, described once. */
export const errors = {
  401: (d = 'missing or invalid credentials (detail: Invalid API key)') => response(d, errorSchema),
  403: (d = 'forbidden') => response(d, errorSchema),
  404: (d = 'not found, or of another tenant') => response(d, errorSchema),
  409: (d = 'conflict') => response(d, errorSchema),
  422: (d = 'validation error: detail is a list of {loc, msg, type}') => response(d, validationErrorSchema),
  429: (d = 'rate limit exceeded (Retry-After)') => response(d, rateLimitedSchema),
  502: (d = 'a dependency is unreachable') => response(d, errorSchema),
  503: (d = 'unavailable') => response(d, errorSchema),
};

/** What any operation may answer besides its own statuses (input guard, rate limits, dependencies). */
export const defaultResponse = () => response('an error: {detail} (422: a list of {loc, msg, type}; 429: see RateLimited)', z.union([rateLimitedSchema, errorSchema]));

export { timestamp } from '../api-shapes';
