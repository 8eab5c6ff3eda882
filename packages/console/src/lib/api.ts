/**
 * The API client: openapi-fetch typed by the types generated from the gateway's OpenAPI document
 * (src/generated, scripts/generate-client.mjs). No hand-written fetch per route.
 *
 * `ok(result)` returns the body of a 2xx answer or throws an ApiError carrying the status and the
 * server's `detail` (a 422's items keep their `loc`). Where the document does not describe a response
 * body yet, the body is `unknown` and the page states the shape it reads (lib/wire.ts) with `as`; once the
 * document has the schema, that `as` is checked by the compiler against it.
 */
import createClient, { type Middleware } from 'openapi-fetch';
import type { paths } from '../generated/openapi';
import { session } from './session';

export const api = createClient<paths>({ baseUrl: '/api' });

const auth: Middleware = {
  onRequest({ request }) {
    const token = session.token;
    if (token && !request.headers.has('authorization')) request.headers.set('authorization', `Bearer ${token}`);
    return request;
  },
  onResponse({ response }) {
    // an expired or revoked session ends here: back to the sign-in page
    if (response.status === 401 && session.token) session.expire();
    return response;
  },
};
api.use(auth);

export interface FieldIssue {
  loc: (string | number)[];
  msg: string;
  type?: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly detail: unknown,
  ) {
    super(ApiError.describe(status, detail));
  }
  /** The 422 items (loc, msg), or none. */
  get issues(): FieldIssue[] {
    return Array.isArray(this.detail) ? (this.detail as FieldIssue[]).filter((i) => i && Array.isArray(i.loc)) : [];
  }
  static describe(status: number, detail: unknown): string {
    if (typeof detail === 'string') return detail;
    if (Array.isArray(detail)) return detail.map((i: FieldIssue) => `${(i.loc ?? []).join('.')}: ${i.msg}`).join('; ');
    if (detail && typeof detail === 'object') return JSON.stringify(detail);
    return `HTTP ${status}`;
  }
}

type Known<D> = [Exclude<D, undefined>] extends [never] ? unknown : Exclude<D, undefined>;

export function ok<R extends { data?: unknown; error?: unknown; response: Response }>(r: R): Known<R['data']> {
  if (!r.response.ok) {
    const e = r.error as { detail?: unknown } | string | undefined;
    const detail = e && typeof e === 'object' && 'detail' in e ? e.detail : (e ?? r.response.statusText);
    throw new ApiError(r.response.status, detail);
  }
  return r.data as Known<R['data']>;
}

/** The message of any error, for an alert. */
export const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e));
