/**
 * The PII envelope that replaces a personal value in stored params (documented in docs/vault.md):
 *
 *   {"$pii": {"v": 1, "subject": "<subject_id>", "kid": "<HSM key label>", "kind": "email",
 *             "alg": "AES-256-GCM", "iv": "<b64>", "ct": "<b64>", "tag": "<b64>"}}
 *
 * The plaintext is the UTF-8 JSON of the original value (so numbers stay numbers); the AAD is
 * `agw:pii:v1|<tenant_id>|<subject_id>`, binding the ciphertext to its tenant and subject. A value of
 * a subject erased before the call is stored without ciphertext: {"$pii": {"v":1, "subject", "kind", "erased": true}}.
 */
import type { SealedData } from '../hsm/hsm-backend';

export const ENVELOPE_KEY = '$pii';
export const ERASED_PLACEHOLDER = '[erased]';

export interface PiiEnvelopeBody {
  v: 1;
  subject: string;
  kid?: string;
  kind: string;
  alg?: string;
  iv?: string;
  ct?: string;
  tag?: string;
  erased?: true;
}

export type PiiEnvelope = { [ENVELOPE_KEY]: PiiEnvelopeBody };

export const piiAad = (tenantId: string, subjectId: string) => `agw:pii:v1|${tenantId}|${subjectId}`;

export function sealEnvelope(subject: string, kid: string, kind: string, sealed: SealedData): PiiEnvelope {
  return { [ENVELOPE_KEY]: { v: 1, subject, kid, kind, alg: sealed.alg, iv: sealed.iv, ct: sealed.ct, tag: sealed.tag } };
}

export function erasedEnvelope(subject: string, kind: string): PiiEnvelope {
  return { [ENVELOPE_KEY]: { v: 1, subject, kind, erased: true } };
}

/** The envelope body when `value` is an envelope (a one-key object `$pii` with a v1 body), else null. */
export function asEnvelope(value: unknown): PiiEnvelopeBody | null {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return null;
  const keys = Object.keys(value);
  if (keys.length !== 1 || keys[0] !== ENVELOPE_KEY) return null;
  const body = (value as Record<string, unknown>)[ENVELOPE_KEY] as Record<string, unknown> | null;
  if (!body || typeof body !== 'object' || body.v !== 1 || typeof body.subject !== 'string') return null;
  return body as unknown as PiiEnvelopeBody;
}

export function sealedOf(body: PiiEnvelopeBody): SealedData | null {
  if (typeof body.ct !== 'string' || typeof body.alg !== 'string') return null;
  return { alg: body.alg, iv: String(body.iv ?? ''), ct: body.ct, tag: String(body.tag ?? '') };
}
