/**
 * The one codec of the vault's sealed values between their messages (agw.vault.v1.SealedSecret, PiiEnvelope)
 * and the JSON form callers store, used on both sides of the vault's contract:
 * - a sealed service secret (webhook signing secret, SIEM token, SSO client secret) is stored as the text
 *   `{"v":1,"key_id":…,"alg":…,"iv":…,"ct":…,"tag":…}` (a tenant setting, a column);
 * - a PII envelope stands in stored params and audit records for a personal value, as the object
 *   `{"$pii": {"v":1,"subject":…,"kid":…,"kind":…,"alg":…,"iv":…,"ct":…,"tag":…}}` (`{"v":1,"subject":…,
 *   "kind":…,"erased":true}` for a value of a subject erased before it was sealed), and is what POST
 *   /api/hsm/encrypt returns.
 * The forms are written with these keys in this order, byte for byte what was stored before the values
 * were messages: records holding envelopes are hashed into the audit chain, and stored values are compared.
 */
import type { vault } from '@agw/proto';
import { AppError, InputError } from './errors';

/** The key of a PII envelope's one-key object. */
export const PII_ENVELOPE_KEY = '$pii';

/** A PII envelope's JSON form: what stored params hold in place of a personal value. */
export type PiiEnvelopeJson = { [PII_ENVELOPE_KEY]: PiiEnvelopeBodyJson };

/** The body of a PII envelope's JSON form, its keys in this order. */
export type PiiEnvelopeBodyJson = {
  v: number;
  subject: string;
  kid?: string;
  kind: string;
  alg?: string;
  iv?: string;
  ct?: string;
  tag?: string;
  erased?: true;
};

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);
const stringOr = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/**
 * The sealed secret when `s` is one of format 1 (a key, an algorithm and a ciphertext; `iv` and `tag` may be
 * empty, as a Vault Transit ciphertext has them inside), else an InputError naming `field`.
 */
export function checkSealedSecret<S extends SealedSecretFields>(s: S | undefined, field = 'sealed'): S {
  if (!s || s.v !== 1 || !s.key_id || !s.alg || !s.ct) throw InputError.at([field], 'not a sealed secret (v1)', 'value_error');
  return s;
}

/** The fields of a sealed secret of format 1, as the vault seals it. */
export type SealedSecretFields = Omit<vault.SealedSecret, 'sealed_json'>;

const storedForm = (s: SealedSecretFields) => JSON.stringify({ v: s.v, key_id: s.key_id, alg: s.alg, iv: s.iv, ct: s.ct, tag: s.tag });

/**
 * The SealSecret answer of a secret the vault sealed: its fields and, for one release, the previous release's
 * form (`sealed_json`: the stored text; docs/architecture.md, "Changing a contract").
 */
export function sealedSecret(fields: SealedSecretFields): vault.SealedSecret {
  return { ...fields, sealed_json: storedForm(fields) };
}

/**
 * A sealed secret's stored form (the vault's SealSecret answer as the caller keeps it). A vault of the previous
 * release answers only `sealed_json`: that text, checked, is the stored form.
 */
export function sealedSecretText(s: vault.SealedSecret | undefined): string {
  if (s && !s.key_id && s.sealed_json) return storedForm(sealedSecretOf(s.sealed_json, 'sealed_json'));
  if (!s || s.v !== 1 || !s.key_id || !s.ct) throw new AppError('internal', 'the vault answered without a sealed secret');
  return storedForm(s);
}

/** A stored sealed secret as the message OpenSecret takes; an InputError naming `field` when it is not one. */
export function sealedSecretOf(text: string, field = 'sealed'): vault.SealedSecret {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw InputError.at([field], `${field} must be JSON`, 'json_invalid');
  }
  if (!isObject(v)) throw InputError.at([field], 'not a sealed secret (v1)', 'value_error');
  // the text itself goes beside the message only where the previous release reads it (OpenSecretRequest.sealed_json)
  return checkSealedSecret(
    { v: typeof v.v === 'number' ? v.v : 0, key_id: stringOr(v.key_id) ?? '', alg: stringOr(v.alg) ?? '', iv: stringOr(v.iv) ?? '', ct: stringOr(v.ct) ?? '', tag: stringOr(v.tag) ?? '', sealed_json: '' },
    field,
  );
}

/**
 * The OpenSecret request of a stored sealed secret: the message and, for one release, the stored text as the
 * previous release's vault reads it (`sealed_json`).
 */
export function openSecretRequest(tenantId: string, purpose: string, stored: string): vault.OpenSecretRequest {
  return { tenant_id: tenantId, purpose, sealed: sealedSecretOf(stored), sealed_json: stored };
}

/** The sealed secret an OpenSecret request names: its message, or the previous release's text (`sealed_json`). */
export function sealedSecretOfRequest(req: vault.OpenSecretRequest): vault.SealedSecret | undefined {
  return req.sealed ?? (req.sealed_json ? sealedSecretOf(req.sealed_json, 'sealed_json') : undefined);
}

/** A PII envelope's JSON form, with only the fields it holds. */
export function piiEnvelopeJson(e: vault.PiiEnvelope): PiiEnvelopeJson {
  const body: Partial<PiiEnvelopeBodyJson> = { v: e.v, subject: e.subject };
  if (e.kid !== undefined) body.kid = e.kid;
  body.kind = e.kind;
  if (e.alg !== undefined) body.alg = e.alg;
  if (e.iv !== undefined) body.iv = e.iv;
  if (e.ct !== undefined) body.ct = e.ct;
  if (e.tag !== undefined) body.tag = e.tag;
  if (e.erased) body.erased = true;
  return { [PII_ENVELOPE_KEY]: body as PiiEnvelopeBodyJson };
}

/**
 * The envelope when `value` is the JSON form of one (a one-key object `$pii` whose body is of format 1 and
 * names its subject; its keys in any order, as Postgres jsonb keeps them), else null. A field of another type
 * than the format's is left out.
 */
export function piiEnvelopeOf(value: unknown): vault.PiiEnvelope | null {
  if (!isObject(value)) return null;
  const keys = Object.keys(value);
  if (keys.length !== 1 || keys[0] !== PII_ENVELOPE_KEY) return null;
  const b = value[PII_ENVELOPE_KEY];
  if (!isObject(b) || b.v !== 1 || typeof b.subject !== 'string') return null;
  return {
    v: 1,
    subject: b.subject,
    kid: stringOr(b.kid),
    kind: stringOr(b.kind) ?? '',
    alg: stringOr(b.alg),
    iv: stringOr(b.iv),
    ct: stringOr(b.ct),
    tag: stringOr(b.tag),
    erased: b.erased === true,
  };
}

/** What a field that must hold a PII envelope is told when it does not. */
export const NOT_A_PII_ENVELOPE = 'envelope must be {"$pii": {"v": 1, "subject": ..., "iv", "ct", "tag", ...}}';

/** `value` as an envelope (its JSON form, `piiEnvelopeOf`), else an InputError naming `field`. */
export function requirePiiEnvelope(value: unknown, field = 'envelope'): vault.PiiEnvelope {
  const e = piiEnvelopeOf(value);
  if (!e) throw InputError.field(field, NOT_A_PII_ENVELOPE, 'envelope_invalid');
  return e;
}

/** The JSON text of an envelope, as the previous release sent it in `envelope_json` (EncryptResponse, DecryptRequest). */
const previousEnvelopeJson = (e: vault.PiiEnvelope) => JSON.stringify(piiEnvelopeJson(e));

/** The vault's Encrypt answer: the envelope and, for one release, its JSON text (`envelope_json`). */
export function encryptResponse(subjectId: string, envelope: vault.PiiEnvelope): vault.EncryptResponse {
  return { subject_id: subjectId, envelope, envelope_json: previousEnvelopeJson(envelope) };
}

/** The envelope of an Encrypt answer: its message, or the previous release's JSON text (`envelope_json`). */
export function envelopeOfEncryptResponse(r: vault.EncryptResponse): vault.PiiEnvelope {
  if (r.envelope) return r.envelope;
  const e = r.envelope_json ? piiEnvelopeOf(safeParse(r.envelope_json)) : null;
  if (!e) throw new AppError('internal', 'the vault answered without an envelope');
  return e;
}

/** A Decrypt request: the envelope and, for one release, its JSON text (`envelope_json`). */
export function decryptRequest(tenantId: string, envelope: vault.PiiEnvelope): vault.DecryptRequest {
  return { tenant_id: tenantId, envelope, envelope_json: previousEnvelopeJson(envelope) };
}

/** The envelope a Decrypt request names: its message, or the previous release's JSON text; else an InputError. */
export function envelopeOfDecryptRequest(req: vault.DecryptRequest): vault.PiiEnvelope {
  if (req.envelope) return req.envelope;
  return requirePiiEnvelope(req.envelope_json ? safeParse(req.envelope_json) : undefined, 'envelope_json');
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
