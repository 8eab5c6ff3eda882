/**
 * The sealed values' codec: message ↔ the JSON form callers store, byte for byte, on values sealed by the
 * vault (SoftHSM2 PKCS#11 and Vault Transit ciphertexts, PII envelopes and erased envelopes as stored params
 * hold them).
 */
import { vault } from '@agw/proto';
import { InputError } from './errors';
import {
  checkSealedSecret,
  decryptRequest,
  encryptResponse,
  envelopeOfDecryptRequest,
  envelopeOfEncryptResponse,
  openSecretRequest,
  piiEnvelopeJson,
  piiEnvelopeOf,
  requirePiiEnvelope,
  sealedSecret,
  sealedSecretOf,
  sealedSecretOfRequest,
  sealedSecretText,
} from './sealed-values';

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

/**
 * A rolling update (docs/architecture.md, "Changing a contract"): for one release every message carries the
 * previous release's text beside it, and a message of the previous release (its text only) is read.
 */
describe('the previous release', () => {
  // the wire as a peer of the previous release sees it: only the fields it knows (decoded from the new bytes)
  const wire = <T>(codec: { encode(m: T): { finish(): Uint8Array }; decode(b: Uint8Array): T }, m: T) => codec.decode(codec.encode(m).finish());

  test('a sealed secret: SealSecret answers and OpenSecret requests carry the stored text; the text alone is read', () => {
    for (const text of STORED_SECRETS) {
      const answer = wire(vault.SealedSecret, sealedSecret(sealedSecretOf(text)));
      expect(answer.sealed_json).toBe(text); // what an old gateway stores
      // an old vault's answer: sealed_json only
      expect(sealedSecretText(vault.SealedSecret.fromPartial({ sealed_json: text }))).toBe(text);
      const req = wire(vault.OpenSecretRequest, openSecretRequest('t', 'webhook_secret', text));
      expect(req.sealed_json).toBe(text); // what an old vault opens
      expect(req.sealed?.sealed_json).toBe(''); // once per request, not again inside the message
      expect(sealedSecretText(sealedSecretOfRequest(req))).toBe(text);
      // an old gateway's request: sealed_json only
      expect(sealedSecretText(sealedSecretOfRequest(vault.OpenSecretRequest.fromPartial({ tenant_id: 't', purpose: 'p', sealed_json: text })))).toBe(text);
    }
    expect(() => sealedSecretOfRequest(vault.OpenSecretRequest.fromPartial({ sealed_json: '{"v":2}' }))).toThrow(InputError);
  });

  test('a PII envelope: Encrypt answers and Decrypt requests carry its JSON text; the text alone is read', () => {
    for (const text of STORED_ENVELOPES) {
      const envelope = piiEnvelopeOf(JSON.parse(text))!;
      const answer = wire(vault.EncryptResponse, encryptResponse('s', envelope));
      expect(answer.envelope_json).toBe(text);
      expect(envelopeOfEncryptResponse(vault.EncryptResponse.fromPartial({ subject_id: 's', envelope_json: text }))).toEqual(envelope);
      const req = wire(vault.DecryptRequest, decryptRequest('t', envelope));
      expect(req.envelope_json).toBe(text);
      expect(envelopeOfDecryptRequest(vault.DecryptRequest.fromPartial({ tenant_id: 't', envelope_json: text }))).toEqual(envelope);
    }
    expect(() => envelopeOfDecryptRequest(vault.DecryptRequest.fromPartial({ tenant_id: 't', envelope_json: '{"x":1}' }))).toThrow(InputError);
    expect(() => envelopeOfEncryptResponse(vault.EncryptResponse.fromPartial({ subject_id: 's' }))).toThrow(/without an envelope/);
  });
});
