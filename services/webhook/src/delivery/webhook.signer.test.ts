import { createHmac } from 'node:crypto';
import { signBody, verifySignature } from './webhook.signer';

describe('webhook signer', () => {
  const secret = 'whsec_test-secret-0123456789';
  const body = '{"event":"action.allowed","timestamp":"2026-11-21T00:00:00.000Z","data":{}}';

  it('is sha256= and the lowercase hex HMAC-SHA256 of the raw body', () => {
    const expected = createHmac('sha256', secret).update(body).digest('hex');
    expect(signBody(secret, body)).toBe(`sha256=${expected}`);
    expect(signBody(secret, body)).toMatch(/^sha256=[0-9a-f]{64}$/);
  });

  it('verifies the right signature and refuses a wrong body, secret, case or a missing header', () => {
    const sig = signBody(secret, body);
    expect(verifySignature(secret, body, sig)).toBe(true);
    expect(verifySignature(secret, Buffer.from(body), sig)).toBe(true);
    expect(verifySignature(secret, `${body} `, sig)).toBe(false);
    expect(verifySignature('another-secret-0123456789', body, sig)).toBe(false);
    expect(verifySignature(secret, body, sig.toUpperCase())).toBe(false);
    expect(verifySignature(secret, body, sig.slice(0, -1))).toBe(false);
    expect(verifySignature(secret, body, undefined)).toBe(false);
  });
});
