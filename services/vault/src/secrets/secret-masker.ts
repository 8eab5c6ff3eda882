/**
 * Masks every form of a credential's secret in what an upstream sends back (docs/security.md, "Secrets
 * never reach the agent"): the brokered executor's and the federation's answers, errors and status
 * reasons. An upstream that reflects its request (a debug tool, an error that quotes the headers, an
 * httpbin-like fetcher) must not hand the tenant's credential to the agent in any spelling a model can
 * read back:
 * - the raw secret;
 * - JSON-escaped (the secret inside a JSON document that a tool returns as text: `\"`, `\\`, `\n`, ...);
 * - `\u`-escaped, every character (lower- and upper-case hex);
 * - URL-encoded (`encodeURIComponent`, with `+` for spaces, and as `application/x-www-form-urlencoded`
 *   serializes it);
 * - base64 and base64url at each of the three byte alignments, so the secret is found inside a longer
 *   encoded text too (the base64 of `Authorization: Bearer <secret>`, or of `client_id:secret`): for each
 *   alignment the characters that also depend on the neighbouring bytes are left out of the pattern.
 *
 * Forms shorter than 4 characters are not masked (they would match everywhere). Masking walks a parsed
 * result (every string and every key), so an encoded form is matched in the text the model reads, not in
 * the JSON text around it.
 */

export const MASK = '[redacted]';
const MIN_FORM = 4;
const MIN_BASE64_CORE = 6;

/** Every spelling of `secret` that is masked, longest first. */
export function secretForms(secret: string): string[] {
  if (secret.length < MIN_FORM) return [];
  const bytes = Buffer.from(secret, 'utf8');
  const forms = new Set<string>([
    secret,
    JSON.stringify(secret).slice(1, -1),
    unicodeEscaped(secret, false),
    unicodeEscaped(secret, true),
    encodeURIComponent(secret),
    encodeURIComponent(secret).replace(/%20/g, '+'),
    // application/x-www-form-urlencoded as URLSearchParams writes it (also encodes ! ' ( ) ~)
    new URLSearchParams([['', secret]]).toString().slice(1),
    ...base64Forms(bytes),
  ]);
  return [...forms].filter((f) => f.length >= MIN_FORM).sort((a, b) => b.length - a.length);
}

function unicodeEscaped(s: string, upper: boolean): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const hex = s.charCodeAt(i).toString(16).padStart(4, '0');
    out += `\\u${upper ? hex.toUpperCase() : hex}`;
  }
  return out;
}

/**
 * The base64 (and base64url) characters that depend on the secret's bytes alone, for the secret placed
 * after 0, 1 or 2 other bytes: those are the three ways it can sit inside a longer encoded text.
 */
function base64Forms(bytes: Buffer): string[] {
  const out: string[] = [];
  for (let shift = 0; shift < 3; shift++) {
    const encoded = Buffer.concat([Buffer.alloc(shift), bytes]).toString('base64');
    // characters 0..start-1 mix in the padding bytes; the last group mixes in what follows (unless it ends the text)
    const start = shift === 0 ? 0 : shift === 1 ? 2 : 3;
    const total = shift + bytes.length;
    const whole = Math.floor(total / 3) * 4; // characters of complete groups
    const core = encoded.slice(start, whole);
    // a shorter run of base64 characters would be found by chance in a long encoded text (an image)
    if (core.length >= MIN_BASE64_CORE) out.push(core, toUrl(core));
    // the secret as the whole encoded text (with its padding), when it stands alone
    if (shift === 0) out.push(encoded, toUrl(encoded).replace(/=+$/, ''));
  }
  return out;
}

const toUrl = (b64: string) => b64.replace(/\+/g, '-').replace(/\//g, '_');

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A masker for a set of secrets: one pattern of all their forms. */
export class SecretMasker {
  private readonly pattern: RegExp | null;

  constructor(secrets: Iterable<string>) {
    const forms = new Set<string>();
    for (const s of secrets) for (const f of secretForms(s)) forms.add(f);
    const sorted = [...forms].sort((a, b) => b.length - a.length);
    this.pattern = sorted.length ? new RegExp(sorted.map(escapeRegExp).join('|'), 'g') : null;
  }

  get empty(): boolean {
    return this.pattern === null;
  }

  /** `text` with every form of every secret replaced by `[redacted]`. */
  text(text: string): string {
    if (!this.pattern) return text;
    this.pattern.lastIndex = 0;
    return this.pattern.test(text) ? text.replace(this.pattern, MASK) : text;
  }

  /** A copy of a parsed JSON value with every string and key masked (the value itself when nothing matched). */
  value<T>(v: T): T {
    if (!this.pattern) return v;
    return this.walk(v) as T;
  }

  private walk(v: unknown): unknown {
    if (typeof v === 'string') return this.text(v);
    if (Array.isArray(v)) {
      let changed = false;
      const out = v.map((x) => {
        const m = this.walk(x);
        if (m !== x) changed = true;
        return m;
      });
      return changed ? out : v;
    }
    if (v && typeof v === 'object') {
      let changed = false;
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
        const mk = this.text(k);
        const mx = this.walk(x);
        if (mk !== k || mx !== x) changed = true;
        out[mk] = mx;
      }
      return changed ? out : v;
    }
    return v;
  }
}
