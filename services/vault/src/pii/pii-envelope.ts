/**
 * The PII envelope that replaces a personal value in stored params (documented in docs/vault.md): the message
 * agw.vault.v1.PiiEnvelope, stored as its JSON form (the one codec: @agw/shared sealed-values.ts)
 *
 *   {"$pii": {"v": 1, "subject": "<subject_id>", "kid": "<HSM key label>", "kind": "email",
 *             "alg": "AES-256-GCM", "iv": "<b64>", "ct": "<b64>", "tag": "<b64>"}}
 *
 * The plaintext is the UTF-8 JSON of the original value (so numbers stay numbers); the AAD is
 * `agw:pii:v1|<tenant_id>|<subject_id>`, binding the ciphertext to its tenant and subject. A value of
 * a subject erased before the call is stored without ciphertext: {"$pii": {"v":1, "subject", "kind", "erased": true}}.
 */
import type { vault } from '@agw/proto';
import { type PiiEnvelopeJson, piiEnvelopeJson, piiEnvelopeOf } from '@agw/shared';
import type { SealedData } from '../hsm/hsm-backend';

export const ERASED_PLACEHOLDER = '[erased]';

export type PiiEnvelope = vault.PiiEnvelope;

export const piiAad = (tenantId: string, subjectId: string) => `agw:pii:v1|${tenantId}|${subjectId}`;

export function sealEnvelope(subject: string, kid: string, kind: string, sealed: SealedData): PiiEnvelope {
  return { v: 1, subject, kid, kind, alg: sealed.alg, iv: sealed.iv, ct: sealed.ct, tag: sealed.tag, erased: false };
}

export function erasedEnvelope(subject: string, kind: string): PiiEnvelope {
  return { v: 1, subject, kind, erased: true };
}

/** The envelope as stored params hold it (its JSON form). */
export const storedEnvelope = (e: PiiEnvelope): PiiEnvelopeJson => piiEnvelopeJson(e);

/** The envelope when `value` is one as stored (a one-key object `$pii` with a v1 body), else null. */
export const asEnvelope = (value: unknown): PiiEnvelope | null => piiEnvelopeOf(value);

export function sealedOf(body: PiiEnvelope): SealedData | null {
  if (typeof body.ct !== 'string' || typeof body.alg !== 'string') return null;
  return { alg: body.alg, iv: body.iv ?? '', ct: body.ct, tag: body.tag ?? '' };
}
