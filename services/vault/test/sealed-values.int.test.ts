/**
 * The sealed values' codec (@agw/shared sealed-values.ts) on values the vault seals with the real SoftHSM2
 * token: a PII envelope in stored params and one of POST /hsm/encrypt go message → JSON form → message (and
 * through the wire) unchanged, byte for byte the form the vault stored before envelopes were messages.
 */
import { randomUUID } from 'node:crypto';
import { vault } from '@agw/proto';
import { piiEnvelopeJson, piiEnvelopeOf, requirePiiEnvelope } from '@agw/shared';
import { SubjectEnvelopes } from '../src/pii/subject-envelopes';
import { type StartedVault, startVault } from './support/start-vault';

let started: StartedVault;
let v: StartedVault['api'];

beforeAll(async () => {
  started = await startVault();
  v = started.api;
});
afterAll(() => started?.close());

/** The envelopes of stored params (each as its JSON text). */
function envelopesIn(node: unknown, out: string[] = []): string[] {
  if (piiEnvelopeOf(node)) out.push(JSON.stringify(node));
  else if (node && typeof node === 'object') for (const x of Object.values(node)) envelopesIn(x, out);
  return out;
}

/** The JSON form as the vault wrote it before envelopes were messages: these keys, in this order. */
const legacyForm = (b: Record<string, unknown>) =>
  JSON.stringify({ $pii: b.erased ? { v: 1, subject: b.subject, kind: b.kind, erased: true } : { v: 1, subject: b.subject, kid: b.kid, kind: b.kind, alg: b.alg, iv: b.iv, ct: b.ct, tag: b.tag } });

test('stored params: every envelope is the legacy form and goes through the codec and the wire byte for byte', async () => {
  const tenant = randomUUID();
  const email = `ada.${randomUUID().slice(0, 6)}@example.com`;
  const r = await v.pii.protect(tenant, randomUUID(), { contact: { name: 'Ada Lovelace', email }, list: [{ phone: '+44 20 7946 0958' }], amount: 7 });
  const envelopes = envelopesIn(r.storedParams);
  expect(envelopes).toHaveLength(3);
  for (const text of envelopes) {
    const json = JSON.parse(text);
    expect(text).toBe(legacyForm(json.$pii));
    const msg = piiEnvelopeOf(json)!;
    expect(JSON.stringify(piiEnvelopeJson(msg))).toBe(text);
    expect(JSON.stringify(piiEnvelopeJson(vault.PiiEnvelope.decode(vault.PiiEnvelope.encode(msg).finish())))).toBe(text);
  }
  // an erased subject's later value: the erased form
  const subject = JSON.parse(envelopes[1]).$pii.subject as string;
  await v.subjects.erase(tenant, subject);
  const later = await v.pii.protect(tenant, randomUUID(), { email });
  const [erased] = envelopesIn(later.storedParams);
  expect(erased).toBe(legacyForm(JSON.parse(erased).$pii));
  expect(JSON.stringify(piiEnvelopeJson(vault.PiiEnvelope.decode(vault.PiiEnvelope.encode(piiEnvelopeOf(JSON.parse(erased))!).finish())))).toBe(erased);
});

test('an envelope of POST /hsm/encrypt: returned in its JSON form, sent back as it was (keys in any order), it opens', async () => {
  const tenant = randomUUID();
  const envelopes = new SubjectEnvelopes(v.keyring, v.subjects);
  const sealed = await envelopes.encrypt(tenant, 'customer-7', { iban: 'DE89370400440532013000', n: 2 ** 53 + 2 });
  const json = piiEnvelopeJson(sealed);
  expect(JSON.stringify(json)).toBe(legacyForm(json.$pii));
  const reordered = { $pii: Object.fromEntries(Object.entries(json.$pii).reverse()) };
  await expect(envelopes.decrypt(tenant, requirePiiEnvelope(reordered))).resolves.toEqual({ subjectId: 'customer-7', value: { iban: 'DE89370400440532013000', n: 2 ** 53 + 2 } });
  await expect(envelopes.decrypt(tenant, undefined)).rejects.toMatchObject({ issues: [{ loc: ['envelope'], type: 'envelope_invalid' }] });
});
