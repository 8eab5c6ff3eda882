/**
 * Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document; the MCP authorization spec's
 * preferred registration): an MCP client whose `client_id` is an HTTPS URL is described by the JSON
 * document at that URL. The gateway fetches it through the fleet's egress rule (`@agw/egress`: public
 * addresses only, OAUTH_CLIENT_METADATA_ALLOW_CIDRS for more; no redirects; 5 KB; 5 s), checks it (valid
 * JSON, `client_id` equal to the URL, `client_name`, `redirect_uris` by the rules of client-rules.ts, a
 * public client; until the answer is a JSON object naming its own URL, every failure is one generic
 * invalid_client and its cause is only logged), and keeps it for
 * the document's `Cache-Control: max-age` (5 minutes when absent, 1 hour at most).
 */
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { InvalidClientError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { OAuthClientInformationFull } from '@modelcontextprotocol/sdk/shared/auth.js';
import { boundClientMetadata } from './client-rules';

const MAX_BYTES = 5 * 1024;
const DEFAULT_TTL_MS = 5 * 60_000;
const MAX_TTL_MS = 60 * 60_000;
const MAX_ENTRIES = 1000;
/** what the caller is told of a document that could not be fetched or does not name its own URL */
export const UNUSABLE = 'the client metadata document could not be fetched, or is not a JSON object (5 KB at most) whose client_id is exactly its URL';

/** An HTTPS URL with a path: the shape of a metadata-document client_id. */
export const isUrlClientId = (clientId: string) => /^https:\/\/[^/?#]+\/[^?#]*[^/?#][^#]*$/.test(clientId) && clientId.length <= 2048;

export class ClientMetadataDocuments {
  private readonly cache = new Map<string, { until: number; client: OAuthClientInformationFull }>();

  /** `log`: where the cause of a failed fetch goes (never to the caller: it would make a port-scan oracle) */
  constructor(private readonly o: { fetch: FetchLike; now?: () => number; log?: (url: string, cause: string) => void }) {}

  async get(url: string): Promise<OAuthClientInformationFull> {
    const now = this.o.now?.() ?? Date.now();
    const hit = this.cache.get(url);
    if (hit && hit.until > now) return hit.client;
    const { client, ttlMs } = await this.load(url);
    if (this.cache.size >= MAX_ENTRIES) this.cache.clear();
    this.cache.set(url, { until: now + ttlMs, client });
    return client;
  }

  private async load(url: string): Promise<{ client: OAuthClientInformationFull; ttlMs: number }> {
    // Until the answer is a JSON object that names this URL as its client_id, the caller learns nothing
    // of it (connection refused, TLS, a status, not JSON, too large all read alike: no port-scan oracle);
    // the cause goes to the log. After that, the document speaks for itself and its faults are named.
    const unusable = (cause: string) => {
      this.o.log?.(url, cause);
      return new InvalidClientError(UNUSABLE);
    };
    const refuse = (why: string) => new InvalidClientError(`client metadata document ${url}: ${why}`);
    let res: Response;
    let text: string;
    try {
      res = await this.o.fetch(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(5000) });
      text = await res.text();
    } catch (e) {
      throw unusable((e as Error).message);
    }
    if (res.status !== 200) throw unusable(`answered ${res.status}`);
    if (Buffer.byteLength(text) > MAX_BYTES) throw unusable(`larger than ${MAX_BYTES} bytes`);
    let doc: Record<string, unknown>;
    try {
      doc = JSON.parse(text) as Record<string, unknown>;
    } catch {
      throw unusable('not JSON');
    }
    if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw unusable('not a JSON object');
    if (doc.client_id !== url) throw unusable('its client_id is not exactly its URL');
    if (typeof doc.client_name !== 'string' || !doc.client_name) throw refuse('has no client_name');
    const uris = doc.redirect_uris;
    if (!Array.isArray(uris) || !uris.length || uris.some((u) => typeof u !== 'string' || !URL.canParse(u))) throw refuse('has no valid redirect_uris');
    const bounded = boundClientMetadata(doc);
    if ('problem' in bounded) throw refuse(bounded.problem);
    doc = bounded.metadata;
    if (doc.token_endpoint_auth_method !== undefined && doc.token_endpoint_auth_method !== 'none') throw refuse('only public clients (token_endpoint_auth_method "none") are supported');
    if ('client_secret' in doc) throw refuse('a metadata document may not carry a client_secret');
    const maxAge = /(?:^|,)\s*max-age=(\d+)/.exec(res.headers.get('cache-control') ?? '')?.[1];
    const ttlMs = maxAge === undefined ? DEFAULT_TTL_MS : Math.min(MAX_TTL_MS, Number(maxAge) * 1000);
    return { client: { ...(doc as unknown as OAuthClientInformationFull), client_id: url, token_endpoint_auth_method: 'none' }, ttlMs };
  }
}
