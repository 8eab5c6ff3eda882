/**
 * A client-credentials token endpoint (RFC 6749 §4.4) for the secured fixture: client_secret_basic or
 * client_secret_post with the fixed client `fixture-client` / `fixture-secret` (or the one client given);
 * tokens are random and valid until revoked.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

export const FIXTURE_CLIENT = { id: 'fixture-client', secret: 'fixture-secret' };

export class TokenIssuer {
  private readonly tokens = new Set<string>();
  /** every token request received (to see that a client asked again after a revocation) */
  requests = 0;

  /** `client`: the one client accepted (default FIXTURE_CLIENT) */
  constructor(private readonly client: { id: string; secret: string } = FIXTURE_CLIENT) {}

  valid(token: string): boolean {
    return this.tokens.has(token);
  }

  /** every access token issued and not revoked, oldest first */
  issued(): string[] {
    return [...this.tokens];
  }

  revokeAll(): void {
    this.tokens.clear();
  }

  handle(req: IncomingMessage, body: string, res: ServerResponse): void {
    this.requests++;
    const form = new URLSearchParams(body);
    let id = form.get('client_id') ?? '';
    let secret = form.get('client_secret') ?? '';
    const basic = /^Basic\s+(.+)$/i.exec(req.headers.authorization ?? '');
    if (basic) {
      const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
      const i = decoded.indexOf(':');
      id = i < 0 ? '' : formDecode(decoded.slice(0, i));
      secret = i < 0 ? '' : formDecode(decoded.slice(i + 1));
    }
    const json = (status: number, v: unknown, headers: Record<string, string> = {}): void =>
      void res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers }).end(JSON.stringify(v));
    if (form.get('grant_type') !== 'client_credentials') return json(400, { error: 'unsupported_grant_type' });
    // RFC 6749 §5.2: a client that authenticated with HTTP Basic is challenged again
    if (id !== this.client.id || secret !== this.client.secret) return json(401, { error: 'invalid_client' }, basic ? { 'www-authenticate': 'Basic realm="agw-fixture"' } : {});
    const token = randomBytes(24).toString('base64url');
    this.tokens.add(token);
    json(200, { access_token: token, token_type: 'Bearer', expires_in: 3600, scope: form.get('scope') ?? '' });
  }
}

/** RFC 6749 §2.3.1: the Basic credentials are form-urlencoded first ('+' is a space); a bad escape stays as it is */
function formDecode(v: string): string {
  try {
    return decodeURIComponent(v.replace(/\+/g, ' '));
  } catch {
    return v;
  }
}
