/**
 * Helpers of the single sign-on tests: a real OpenID provider (oidc-idp.mjs: panva's oidc-provider) in its
 * own process on a loopback port, and a small HTTP "browser" (fetch, redirects followed by hand, one cookie
 * jar per origin) that signs in through it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';

export interface IdpClient {
  client_id: string;
  client_secret: string;
  redirect_uris: string[];
}

export interface Idp {
  issuer: string;
  stop(): Promise<void>;
}

/** Starts oidc-idp.mjs on `port` with these clients; resolves once it listens. */
export function startIdp(port: number, clients: IdpClient[]): Promise<Idp> {
  const child: ChildProcess = spawn(process.execPath, [path.join(__dirname, 'oidc-idp.mjs')], {
    env: { ...process.env, IDP_PORT: String(port), IDP_CLIENTS: JSON.stringify(clients) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr!.on('data', (c) => (err += String(c)));
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`IdP on ${port} did not start: ${err}`)), 15_000);
    child.on('exit', (code) => reject(new Error(`IdP exited (${code}): ${err}`)));
    child.stdout!.on('data', (c) => {
      const m = /ready (\S+)/.exec(String(c));
      if (!m) return;
      clearTimeout(t);
      resolve({
        issuer: m[1]!,
        stop: () =>
          new Promise<void>((done) => {
            if (child.exitCode !== null) return done();
            child.once('exit', () => done());
            child.kill('SIGTERM');
          }),
      });
    });
  });
}

export interface Hop {
  url: string;
  status: number;
  location?: string;
}

/** A user agent: a cookie jar per origin, redirects followed one by one (each hop recorded). */
export class Browser {
  private readonly jar = new Map<string, Map<string, string>>();

  cookie(origin: string, name: string): string | undefined {
    return this.jar.get(origin)?.get(name);
  }

  private store(url: string, res: Response): void {
    const origin = new URL(url).origin;
    const jar = this.jar.get(origin) ?? new Map<string, string>();
    this.jar.set(origin, jar);
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';');
      const i = pair!.indexOf('=');
      const name = pair!.slice(0, i).trim();
      const value = pair!.slice(i + 1).trim();
      const expired = attrs.some((a) => /^\s*max-age=0\s*$/i.test(a) || (/^\s*expires=/i.test(a) && new Date(a.split('=')[1]!) < new Date()));
      if (expired || !value) jar.delete(name);
      else jar.set(name, value);
    }
  }

  async request(method: string, url: string, o: { form?: Record<string, string>; headers?: Record<string, string> } = {}): Promise<Response> {
    const jar = this.jar.get(new URL(url).origin);
    const headers: Record<string, string> = { ...(o.headers ?? {}) };
    if (jar?.size) headers.cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    if (o.form) headers['content-type'] = 'application/x-www-form-urlencoded';
    const res = await fetch(url, { method, headers, redirect: 'manual', body: o.form ? new URLSearchParams(o.form).toString() : undefined });
    this.store(url, res);
    return res;
  }

  /**
   * Requests `url` and follows redirects until an answer that is not a redirect, or a Location for which
   * `stop` is true (not requested). Returns the hops and the last response.
   */
  async follow(method: string, url: string, o: { form?: Record<string, string>; stop?: (location: string) => boolean } = {}): Promise<{ hops: Hop[]; res: Response; body: string; next?: string }> {
    const hops: Hop[] = [];
    let res = await this.request(method, url, { form: o.form });
    let at = url;
    for (let i = 0; i < 20; i++) {
      const location = res.headers.get('location') ?? undefined;
      hops.push({ url: at, status: res.status, ...(location ? { location: new URL(location, at).href } : {}) });
      if (res.status < 300 || res.status >= 400 || !location) break;
      const next = new URL(location, at).href;
      if (o.stop?.(next)) return { hops, res, body: await res.text(), next };
      await res.text();
      at = next;
      res = await this.request('GET', next);
    }
    return { hops, res, body: await res.text() };
  }
}

/**
 * At the IdP's login form (the last response of `follow`): its action URL. The form posts e-mail, groups and
 * email_verified.
 */
export function loginFormAction(body: string, pageUrl: string): string {
  const m = /<form method="post" action="([^"]+)"/.exec(body);
  if (!m) throw new Error(`no login form at ${pageUrl}: ${body.slice(0, 300)}`);
  return new URL(m[1]!, pageUrl).href;
}
