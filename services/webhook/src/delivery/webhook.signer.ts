/**
 * The webhook signature (spec "Events > Webhooks"): `X-Service-Signature: sha256=<lowercase hex
 * HMAC-SHA256 of the raw request body>`, keyed with the tenant's webhook secret.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'X-Service-Signature';

/** The header value for `rawBody` signed with `secret`. */
export function signBody(secret: string, rawBody: string | Buffer): string {
  return `sha256=${createHmac('sha256', secret).update(rawBody).digest('hex')}`;
}

/**
 * What a receiver does: recompute the signature over the raw bytes it received and compare in constant
 * time. Lengths are compared first (the length of a valid header is public: 71 characters).
 */
export function verifySignature(secret: string, rawBody: string | Buffer, header: string | undefined): boolean {
  if (!header) return false;
  const expected = Buffer.from(signBody(secret, rawBody));
  const given = Buffer.from(header);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
