/**
 * The sealed values' codec: message ↔ the JSON form callers store, byte for byte, on values sealed by the
 * vault (SoftHSM2 PKCS#11 and Vault Transit ciphertexts, PII envelopes and erased envelopes as stored params
 * hold them).
 */
import { vault } from '@agw/proto';
import { InputError } from './errors';
import { checkSealedSecret, piiEnvelopeJson, piiEnvelopeOf, requirePiiEnvelope, sealedSecretOf, sealedSecretText } from './sealed-values';

/** Sealed by the vault (webhook secrets of a PKCS#11 vault and of a Vault Transit one), as tenant settings hold them. */
const STORED_SECRETS = [
  '{"v":1,"key_id":"agw:3f2b8a0e-6d1c-4a7e-9b55-0c8e4f7d2a19:credentials","alg":"AES-256-GCM","iv":"q3Jm0nN1p0c8kTQx","ct":"4XWm8dR2b9vGJ0pZ3aQe1n7HkVtYcL5sM2oPuI6wBfE9rDg=","tag":"Yk2mW8pQ4vN1sT7xR0cZ3A=="}',
  '{"v":1,"key_id":"agw:0b7c1e55-2f44-4c1b-8a3e-d5f6a7b8c9d0:credentials","alg":"transit:aes256-gcm96","iv":"","ct":"vault:v1:Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZg==","tag":""}',
];

/** Envelopes as the vault stores them in params (and so in audit records): sealed, Transit, erased. */
const STORED_ENVELOPES = [
  '{"$pii":{"v":1,"subject":"sub_5d41402abc4b2a76b9719d911017c592","kid":"agw:7c9e6679-7425-40de-944b-e07fc1f90ae7:subject:sub_5d41402abc4b2a76b9719d911017c592","kind":"email","alg":"AES-256-GCM","iv":"3m9Qb2k1Zx8pLw0A","ct":"o8Hq1sV6yTn3Kc2bZ4xR9wU5mJ0eG7dF","tag":"Pq4sT1vN8kW2zX6cR0bY3A=="}}',
  '{"$pii":{"v":1,"subject":"customer-42","kid":"agw:0b7c1e55-2f44-4c1b-8a3e-d5f6a7b8c9d0:subject:customer-42","kind":"named_field","alg":"transit:aes256-gcm96","iv":"","ct":"vault:v1:QUJDREVGR0hJSktMTU5PUA==","tag":""}}',
  '{"$pii":{"v":1,"subject":"sub_a94a8fe5ccb19ba61c4c0873d391e987","kind":"phone","erased":true}}',
];

test('a stored sealed secret → message → stored form is byte for byte the same, across the wire too', () => {
  for (const text of STORED_SECRETS) {
    const msg = sealedSecretOf(text);
    expect(msg.v).toBe(1);
    expect(sealedSecretText(msg)).toBe(text);
    expect(sealedSecretText(vault.SealedSecret.decode(vault.SealedSecret.encode(msg).finish()))).toBe(text);
  }
});

test('a stored value that is no sealed secret is a precise 422 naming the field; an empty answer is an internal error', () => {
  const issue = (f: () => unknown) => {
    try {
      f();
    } catch (e) {
      return e instanceof InputError ? e.issues[0] : e;
    }
    return undefined;
  };
  expect(issue(() => sealedSecretOf('not json'))).toEqual({ loc: ['sealed'], msg: 'sealed must be JSON', type: 'json_invalid' });
  expect(issue(() => sealedSecretOf('[1]', 'webhook_secret_sealed'))).toMatchObject({ loc: ['webhook_secret_sealed'], type: 'value_error' });
  expect(issue(() => sealedSecretOf('{"v":2,"key_id":"k","alg":"a","ct":"c"}'))).toMatchObject({ msg: 'not a sealed secret (v1)' });
  expect(issue(() => checkSealedSecret(undefined))).toMatchObject({ loc: ['sealed'] });
  expect(() => sealedSecretText(undefined)).toThrow('the vault answered without a sealed secret');
  expect(() => sealedSecretText(vault.SealedSecret.decode(new Uint8Array()))).toThrow('without a sealed secret');
});

test('a stored PII envelope → message → JSON form is byte for byte the same, across the wire too', () => {
  for (const text of STORED_ENVELOPES) {
    const msg = piiEnvelopeOf(JSON.parse(text));
    expect(msg).not.toBeNull();
    expect(JSON.stringify(piiEnvelopeJson(msg!))).toBe(text);
    expect(JSON.stringify(piiEnvelopeJson(vault.PiiEnvelope.decode(vault.PiiEnvelope.encode(msg!).finish())))).toBe(text);
  }
});

test('an envelope with its keys reordered (Postgres jsonb) reads the same; a marked one reads as erased', () => {
  const stored = JSON.parse(STORED_ENVELOPES[0]);
  const body = stored.$pii as Record<string, unknown>;
  const reordered = { $pii: Object.fromEntries(Object.entries(body).reverse()) };
  expect(piiEnvelopeOf(reordered)).toEqual(piiEnvelopeOf(stored));
  expect(JSON.stringify(piiEnvelopeJson(piiEnvelopeOf(reordered)!))).toBe(STORED_ENVELOPES[0]);
  expect(piiEnvelopeOf({ $pii: { ...body, erased: true } })).toMatchObject({ erased: true, ct: body.ct });
});

test('what is no envelope is null, or a precise 422 where one is required', () => {
  for (const v of [null, 'x', [], {}, { $pii: null }, { $pii: { v: 2, subject: 's' } }, { $pii: { v: 1 } }, { $pii: { v: 1, subject: 's' }, other: 1 }]) expect(piiEnvelopeOf(v)).toBeNull();
  expect(() => requirePiiEnvelope({ email: 'a@b.c' })).toThrow(InputError);
  try {
    requirePiiEnvelope({});
  } catch (e) {
    expect((e as InputError).issues).toEqual([{ loc: ['envelope'], msg: expect.stringContaining('{"$pii"'), type: 'envelope_invalid' }]);
  }
});
