/**
 * R4: schema-aware fuzzing of every operation of the fleet's OpenAPI document (fast-check).
 * For each operation, requests are generated from its schemas (path and query parameters, JSON body) and
 * mutated with hostile values (wrong types, boundaries, 1e308, -1, impossible dates, NUL, lone surrogates,
 * 10 KB strings, `__proto__` / `constructor` keys, extra keys), `FUZZ_RUNS` per operation, from one fixed
 * seed (printed; `FAULTS_FUZZ_SEED=<n>` replays a run). Then fixed hostile shapes per operation: an
 * oversized body, deep nesting, invalid UTF-8, duplicate keys, prototype-pollution keys, a wrong
 * content type, huge query values; and raw-socket requests (header injection, obs-text, oversized
 * headers). Every answer is checked: never a 5xx, and a 4xx has the spec's error shape (`{"detail": …}`,
 * a 422 a list of {loc, msg, type} with a non-empty loc; a 429 the rate-limit body).
 */
import net from 'node:net';
import fc from 'fast-check';
import { BASE_URL } from './env';

export const FUZZ_SEED = Number(process.env.FAULTS_FUZZ_SEED ?? 20261123);
export const FUZZ_RUNS = Number(process.env.FAULTS_FUZZ_RUNS ?? 40);

type Schema = Record<string, any>;
export interface Operation {
  method: string;
  path: string;
  parameters: Array<{ name: string; in: string; required?: boolean; schema?: Schema }>;
  body?: Schema;
  public: boolean;
}
export interface FuzzRequest {
  op: string;
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  what: string;
}
export interface Finding {
  request: string;
  status: number;
  problem: string;
  body: string;
}

export function operations(doc: any): Operation[] {
  const ops: Operation[] = [];
  for (const [p, item] of Object.entries<any>(doc.paths ?? {}))
    for (const [method, op] of Object.entries<any>(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const parameters = [...(item.parameters ?? []), ...(op.parameters ?? [])].map((x: any) => resolve(doc, x));
      for (const m of p.matchAll(/\{(\w+)\}/g)) if (!parameters.some((x) => x.in === 'path' && x.name === m[1])) parameters.push({ name: m[1], in: 'path', required: true, schema: { type: 'string' } });
      const body = resolve(doc, op.requestBody)?.content?.['application/json']?.schema;
      ops.push({ method: method.toUpperCase(), path: p, parameters, body: body ? resolve(doc, body) : undefined, public: Array.isArray(op.security) && op.security.length === 0 });
    }
  return ops;
}

function resolve(doc: any, x: any): any {
  let v = x;
  for (let i = 0; v && typeof v === 'object' && typeof v.$ref === 'string' && i < 10; i++)
    v = v.$ref.replace(/^#\//, '').split('/').reduce((o: any, k: string) => o?.[k.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
  return v;
}

const HOSTILE_STRINGS = [
  '', ' ', 'x'.repeat(10_000), '\u0000', 'a\u0000b', '\ud800', '\udfff', '%00', '%ZZ', '../../etc/passwd', "' OR 1=1 --", '<script>alert(1)</script>',
  '2020-02-30', '2020-13-01', '9999-99-99T99:99:99Z', '-1', '1e308', 'NaN', 'Infinity', 'null', 'true', '{"a":1}', '__proto__', 'constructor',
  'toString', '\r\nX-Injected: 1', 'ü', '😀', '\u202e', 'zz',
];
const HOSTILE_NUMBERS = [-1, 0, -0, 1, 1e308, -1e308, 2 ** 53 + 1, 0.5, 1e-308, 2147483648];

export function hostile(): fc.Arbitrary<unknown> {
  return fc.oneof(
    fc.constantFrom<unknown>(...HOSTILE_STRINGS),
    fc.constantFrom<unknown>(...HOSTILE_NUMBERS),
    fc.constantFrom<unknown>(null, true, false, [], {}, { __proto__x: 1 }, JSON.parse('{"__proto__":{"polluted":1}}'), { constructor: { prototype: { polluted: 1 } } }),
    fc.string({ unit: 'binary', maxLength: 40 }),
    fc.jsonValue({ maxDepth: 3 }),
  );
}

/** An arbitrary of values that match the schema (the mutation is added by `mutate`). */
export function fromSchema(doc: any, s0: Schema | undefined, depth = 0): fc.Arbitrary<unknown> {
  const s = resolve(doc, s0) ?? {};
  if (depth > 4) return fc.constant(null);
  if (Array.isArray(s.enum) && s.enum.length) return fc.constantFrom(...s.enum);
  if (s.const !== undefined) return fc.constant(s.const);
  for (const k of ['oneOf', 'anyOf'] as const) if (Array.isArray(s[k]) && s[k].length) return fc.oneof(...s[k].map((x: Schema) => fromSchema(doc, x, depth + 1)));
  if (Array.isArray(s.allOf) && s.allOf.length) {
    const merged = s.allOf.map((x: Schema) => resolve(doc, x)).reduce((a: Schema, b: Schema) => ({ ...a, ...b, properties: { ...a.properties, ...b.properties }, required: [...(a.required ?? []), ...(b.required ?? [])] }), {});
    return fromSchema(doc, merged, depth + 1);
  }
  const type = Array.isArray(s.type) ? s.type.find((t: string) => t !== 'null') : s.type;
  switch (type) {
    case 'string':
      if (s.format === 'uuid') return fc.uuid();
      if (s.format === 'date-time') return fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString());
      if (s.format === 'date') return fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10));
      if (s.format === 'email') return fc.emailAddress();
      if (s.format === 'uri' || s.format === 'url') return fc.webUrl();
      return fc.string({ minLength: s.minLength ?? 0, maxLength: Math.min(s.maxLength ?? 40, 200) });
    case 'integer':
      return fc.integer({ min: Math.max(s.minimum ?? -1e6, -(2 ** 31)), max: Math.min(s.maximum ?? 1e6, 2 ** 31) });
    case 'number':
      return fc.double({ noNaN: true, noDefaultInfinity: true, min: s.minimum ?? -1e6, max: s.maximum ?? 1e6 });
    case 'boolean':
      return fc.boolean();
    case 'array':
      return fc.array(fromSchema(doc, s.items, depth + 1), { maxLength: Math.min(s.maxItems ?? 4, 4) });
    case 'object':
    default: {
      if (!s.properties && type !== 'object') return fc.jsonValue({ maxDepth: 2 });
      const props: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [k, v] of Object.entries<Schema>(s.properties ?? {})) props[k] = fromSchema(doc, v, depth + 1);
      const record = fc.record(props, { requiredKeys: (s.required ?? []).filter((k: string) => k in props) });
      if (s.additionalProperties && typeof s.additionalProperties === 'object')
        return fc.tuple(record, fc.dictionary(fc.string({ maxLength: 12 }), fromSchema(doc, s.additionalProperties, depth + 1), { maxKeys: 3 })).map(([a, b]) => ({ ...b, ...a }));
      return record;
    }
  }
}

/** Valid-by-schema most of the time; otherwise one hostile value in place of the whole or of one key, or an extra key. */
export function mutate(valid: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 3, arbitrary: valid },
    { weight: 1, arbitrary: hostile() },
    {
      weight: 2,
      arbitrary: fc.tuple(valid, fc.nat(), hostile()).map(([v, i, h]) => {
        if (!v || typeof v !== 'object' || Array.isArray(v)) return h;
        const keys = Object.keys(v);
        if (!keys.length) return { extra: h };
        return { ...v, [keys[i % keys.length]]: h };
      }),
    },
    { weight: 1, arbitrary: fc.tuple(valid, fc.string({ maxLength: 12 }), hostile()).map(([v, k, h]) => (v && typeof v === 'object' && !Array.isArray(v) ? { ...v, [k || 'extra']: h } : v)) },
  );
}

/** Percent-encoding that also carries a lone surrogate (as its 3 bytes, which the edge must refuse). */
function enc(v: unknown): string {
  const str = typeof v === 'string' ? v : (JSON.stringify(v) ?? '');
  let out = '';
  for (const part of str.match(/[\ud800-\udbff][\udc00-\udfff]|[\s\S]/g) ?? []) {
    const c = part.charCodeAt(0);
    if (part.length === 1 && c >= 0xd800 && c <= 0xdfff) out += `%${(0xe0 | (c >> 12)).toString(16)}%${(0x80 | ((c >> 6) & 0x3f)).toString(16)}%${(0x80 | (c & 0x3f)).toString(16)}`.toUpperCase();
    else out += encodeURIComponent(part);
  }
  return out;
}

/** The generated requests of one operation (deterministic for a seed). */
export function generated(doc: any, op: Operation, headers: Record<string, string>, objects: Record<string, string>, seed: number, runs: number): FuzzRequest[] {
  const pathArbs = op.parameters.filter((p) => p.in === 'path').map((p) => fc.oneof({ weight: 2, arbitrary: objects[p.name] ? fc.constant(objects[p.name]) : fromSchema(doc, p.schema) }, { weight: 2, arbitrary: fromSchema(doc, p.schema) }, { weight: 1, arbitrary: hostile() }).map((v) => [p.name, v] as const));
  const queryArbs = op.parameters.filter((p) => p.in === 'query').map((p) => fc.option(mutate(fromSchema(doc, p.schema)), { nil: undefined }).map((v) => [p.name, v] as const));
  const hasBody = ['POST', 'PUT', 'PATCH'].includes(op.method);
  const bodyArb = hasBody ? mutate(op.body ? fromSchema(doc, op.body) : fc.dictionary(fc.string({ maxLength: 10 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 })) : fc.constant(undefined);
  const arb = fc.record({ path: fc.tuple(...pathArbs), query: fc.tuple(...queryArbs), extraQuery: fc.option(fc.tuple(fc.string({ maxLength: 8 }), hostile()), { nil: undefined }), body: bodyArb });
  return fc.sample(arb, { seed: seed + hash(`${op.method} ${op.path}`), numRuns: runs }).map((s, i) => {
    const params = Object.fromEntries(s.path as ReadonlyArray<readonly [string, unknown]>);
    let url = op.path.replace(/\{(\w+)\}/g, (_m, n: string) => enc(params[n]) || '%20');
    const q = [...(s.query as ReadonlyArray<readonly [string, unknown]>)].filter(([, v]) => v !== undefined).map(([k, v]) => `${enc(k)}=${enc(v)}`);
    if (s.extraQuery) q.push(`${enc(s.extraQuery[0]) || 'x'}=${enc(s.extraQuery[1])}`);
    if (q.length) url += `?${q.join('&')}`;
    const h: Record<string, string> = { ...headers, ...mcpHeaders(op) };
    if (s.body !== undefined) h['content-type'] = 'application/json';
    return { op: `${op.method} ${op.path}`, method: op.method, url, headers: h, body: s.body === undefined ? undefined : JSON.stringify(s.body), what: `generated #${i}` };
  });
}

/** The MCP endpoint answers only clients that accept both JSON and SSE (MCP Streamable HTTP). */
function mcpHeaders(op: Operation): Record<string, string> {
  return op.path.startsWith('/mcp/server') ? { accept: 'application/json, text/event-stream' } : {};
}

function hash(s: string): number {
  let h = 0;
  for (const c of s) h = (h * 31 + c.charCodeAt(0)) | 0;
  return Math.abs(h);
}

/** Fixed hostile shapes, per operation. */
export function shapes(op: Operation, headers: Record<string, string>, objects: Record<string, string>): FuzzRequest[] {
  const url = op.path.replace(/\{(\w+)\}/g, (_m, n: string) => encodeURIComponent(objects[n] ?? 'x'));
  const out: FuzzRequest[] = [];
  const add = (what: string, body?: string | Buffer, extra: Record<string, string> = {}, u = url) =>
    out.push({ op: `${op.method} ${op.path}`, method: op.method, url: u, headers: { ...headers, ...mcpHeaders(op), ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...extra }, body, what });
  add('huge query value (6 KB)', undefined, {}, `${url}${url.includes('?') ? '&' : '?'}q=${'a'.repeat(6_000)}`);
  add('many query parameters', undefined, {}, `${url}?${Array.from({ length: 300 }, (_, i) => `k${i}=v`).join('&')}`);
  add('repeated query parameter', undefined, {}, `${url}?limit=1&limit=2&limit=x&tool_id=a&tool_id=b`);
  add('path with a NUL and a dot-dot', undefined, {}, `${url}/%00/..%2f..%2fetc`);
  if (!['POST', 'PUT', 'PATCH'].includes(op.method)) return out;
  add('oversized body (1.2 MB)', JSON.stringify({ a: 'x'.repeat(1_200_000) }));
  add('nested 40 levels', `${'{"a":'.repeat(40)}1${'}'.repeat(40)}`);
  add('nested 5,000 levels', `${'['.repeat(5_000)}${']'.repeat(5_000)}`);
  add('invalid UTF-8', Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0xc0, 0xaf, 0x22, 0x7d]));
  add('duplicate keys', '{"tool":"a","tool":"b","agent_id":"x","agent_id":{"y":1}}');
  add('__proto__ key', '{"__proto__":{"polluted":true},"a":1}');
  add('constructor.prototype key', '{"constructor":{"prototype":{"polluted":true}}}');
  add('malformed JSON', '{"a":');
  add('a JSON string, not an object', '"just a string"');
  add('null body', 'null');
  add('wrong content type', 'a=1&b=2', { 'content-type': 'application/x-www-form-urlencoded' });
  add('text/plain body', 'hello', { 'content-type': 'text/plain' });
  add('unknown charset', '{}', { 'content-type': 'application/json; charset=ebcdic' });
  return out;
}

export async function send(r: FuzzRequest): Promise<{ status: number; text: string; headers: Headers }> {
  const res = await fetch(`${BASE_URL}${r.url}`, { method: r.method, headers: r.headers, body: r.body, signal: AbortSignal.timeout(30_000) });
  return { status: res.status, text: await res.text(), headers: res.headers };
}

/** A request written byte for byte on a socket (what fetch refuses to send); the raw answer. */
export async function sendRaw(raw: string | Buffer, timeoutMs = 5_000): Promise<{ status: number; text: string; head: string }> {
  const u = new URL(BASE_URL);
  return new Promise((resolve) => {
    const sock = net.connect(Number(u.port), u.hostname);
    const chunks: Buffer[] = [];
    const done = () => {
      const all = Buffer.concat(chunks).toString('latin1');
      const [head, ...rest] = all.split('\r\n\r\n');
      resolve({ status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(all)?.[1] ?? 0), head: head ?? '', text: rest.join('\r\n\r\n') });
    };
    // no half-close: the server answers and closes (Connection: close, or an error), or the timeout ends it
    sock.setTimeout(timeoutMs, () => sock.destroy());
    sock.on('data', (c) => chunks.push(c));
    sock.on('error', () => undefined);
    sock.on('close', done);
    sock.on('connect', () => sock.write(raw));
  });
}

/** Which error shape a route speaks besides the spec's `{detail}`. */
export type ErrorDialect = 'api' | 'mcp' | 'oauth';

/** The dialect of an operation ("POST /mcp/server", "GET /oauth/authorize", ...). */
export function dialectOf(op: string): ErrorDialect {
  if (op.includes(' /mcp/server')) return 'mcp';
  if (/ \/oauth\/(authorize|token|register|revoke)\b/.test(op)) return 'oauth';
  return 'api';
}

/** The spec's error shape for a 4xx; a list of problems (empty when fine). */
export function checkAnswer(status: number, text: string, dialect: ErrorDialect = 'api'): string[] {
  const mcp = dialect === 'mcp';
  if (status === 0) return ['no answer'];
  if (status >= 500) return [`${status}`];
  if (status < 400) return [];
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    return [`${status} is not JSON`];
  }
  if (status === 429 && body?.error === 'rate_limit_exceeded') return [];
  // the MCP endpoint (/mcp/server) speaks JSON-RPC: its errors are JSON-RPC error objects (MCP transport)
  if (mcp && body?.jsonrpc === '2.0' && typeof body?.error?.code === 'number' && typeof body.error.message === 'string' && body.error.message) return [];
  // the OAuth 2.1 endpoints of the MCP authorization server answer OAuth's own error body (RFC 6749 §5.2)
  if (dialect === 'oauth' && typeof body?.error === 'string' && body.error) return [];
  if (!body || typeof body !== 'object' || !('detail' in body)) return [`${status} without detail`];
  const d = body.detail;
  if (status === 422) {
    if (!Array.isArray(d) || !d.length) return ['422 detail is not a non-empty list'];
    const bad = d.filter((i: any) => !Array.isArray(i?.loc) || !i.loc.length || typeof i.msg !== 'string' || !i.msg || typeof i.type !== 'string');
    return bad.length ? [`422 item without loc/msg/type: ${JSON.stringify(bad[0]).slice(0, 120)}`] : [];
  }
  if (typeof d === 'string' ? !d : d === null || d === undefined) return [`${status} with an empty detail`];
  return [];
}
