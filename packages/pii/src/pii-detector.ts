/**
 * Finds personal data in one JSON value (pure, no I/O). Well-kept validators decide: `validator`
 * (e-mail, IP, payment card issuer patterns), `libphonenumber-js` (phone numbers in international
 * format), `ibantools` (IBAN checksum); payment cards must also pass Luhn. Named fields (`name`, `email`,
 * `ssn`, `phone`, `address`, `date_of_birth`, ...) are personal data whatever their value.
 *
 * Every identifier found comes back normalised (lower-case e-mail, E.164 phone, electronic IBAN, card
 * and SSN digits) so the subject id derived from it is stable across spellings.
 */
import * as ibantools from 'ibantools';
import { findPhoneNumbersInText, parsePhoneNumberFromString } from 'libphonenumber-js';
import validator from 'validator';

export type IdentifierKind = 'email' | 'phone' | 'ssn' | 'iban' | 'card' | 'ip';
export type PiiKind = IdentifierKind | 'named_field';

/** Which identifier anchors a subject when an object holds several (first wins). */
export const IDENTIFIER_PRIORITY: IdentifierKind[] = ['email', 'phone', 'ssn', 'iban', 'card', 'ip'];

export interface Identifier {
  kind: IdentifierKind;
  normalized: string;
}

export interface ValueFindings {
  kinds: PiiKind[];
  identifiers: Identifier[];
}

/** Field names whose values are personal data (compared lower-case without `_`, `-`, spaces). */
const NAMED_FIELDS = new Set(
  [
    'name',
    'full_name',
    'first_name',
    'last_name',
    'given_name',
    'family_name',
    'surname',
    'email',
    'email_address',
    'phone',
    'phone_number',
    'mobile',
    'telephone',
    'ssn',
    'social_security_number',
    'national_id',
    'passport',
    'passport_number',
    'tax_id',
    'address',
    'street',
    'street_address',
    'home_address',
    'postal_address',
    'date_of_birth',
    'dob',
    'birthdate',
    'birth_date',
    'iban',
    'card_number',
    'credit_card',
    'ip',
    'ip_address',
  ].map((f) => f.replace(/[_\-\s]/g, '')),
);

const PHONE_FIELDS = new Set(['phone', 'phonenumber', 'mobile', 'telephone', 'tel']);

export function normalizeFieldName(key: string): string {
  return key.toLowerCase().replace(/[_\-\s]/g, '');
}

export function isNamedPiiField(key: string | undefined): boolean {
  return key !== undefined && NAMED_FIELDS.has(normalizeFieldName(key));
}

/** A field whose value is parsed as a phone number whatever it holds (national numbers included). */
function isPhoneField(key: string | undefined): boolean {
  return key !== undefined && PHONE_FIELDS.has(normalizeFieldName(key));
}

/** Luhn checksum of a digit string. */
export function luhn(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return false;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return digits.length > 0 && sum % 10 === 0;
}

function cardDigits(candidate: string): string | null {
  const digits = candidate.replace(/[\s-]/g, '');
  if (!/^\d{13,19}$/.test(digits)) return null;
  return luhn(digits) && validator.isCreditCard(digits) ? digits : null;
}

const SSN = /^(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}$/;
const EMAIL_IN_TEXT = /[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+/g;
const IBAN_IN_TEXT = /\b[A-Z]{2}\d{2}(?:[ ]?[A-Z0-9]{4}){2,7}(?:[ ]?[A-Z0-9]{1,4})?\b/gi;
const CARD_IN_TEXT = /\b\d(?:[ -]?\d){12,18}\b/g;
const SSN_IN_TEXT = /\b\d{3}-\d{2}-\d{4}\b/g;
const IPV4_IN_TEXT = /\b(?:\d{1,3}\.){3}\d{1,3}\b/g;
const IPV6_IN_TEXT = /(?<![\w:])(?:[0-9a-f]{0,4}:){2,7}[0-9a-f]{0,4}(?![\w:])/gi;
/** international numbers only (a leading +); candidates are parsed one by one */
const PHONE_IN_TEXT = /\+\d[\d ().-]{5,22}\d/g;
/** no identifier is longer than this: longer runs of non-space characters are skipped by the text scan */
const MAX_TOKEN = 256;
const LONG_TOKEN = new RegExp(`\\S{${MAX_TOKEN + 1},}`, 'g');

function normalizeIp(ip: string): string {
  return ip.toLowerCase();
}

/**
 * Every identifier `scanIdentifiers` knows is written with an ASCII digit (card, SSN, IBAN check digits,
 * IPv4, phone), an `@` (email), a `:` (IPv6) or a `+` (a phone number in text): a value holding none of them
 * is not scanned (most values of tool calls are words: the scan would cost most of the gateway's PII
 * pre-check), unless its field is a phone field, whose value is parsed as a number whatever it holds.
 * pii-detector.test.ts checks that the scan finds nothing in such values.
 */
const IDENTIFIER_MARK = /[0-9@:+]/;

/** Personal data in a string value (whole value and free text). */
export function detectInString(text: string, fieldName?: string): ValueFindings {
  const s = text.trim();
  const phoneField = isPhoneField(fieldName);
  const identifiers = s.length > 0 && s.length <= 100_000 && (phoneField || IDENTIFIER_MARK.test(s)) ? scanIdentifiers(s, phoneField) : [];
  const kinds: PiiKind[] = [...new Set(identifiers.map((i) => i.kind))];
  if (isNamedPiiField(fieldName) && s.length > 0) kinds.push('named_field');
  return { kinds, identifiers };
}

/** The identifiers in a trimmed value, by priority (whole-value checks, then free text). */
export function scanIdentifiers(s: string, phoneField = false): Identifier[] {
  const found = new Map<string, Identifier>();
  const add = (kind: IdentifierKind, normalized: string) => found.set(`${kind}:${normalized}`, { kind, normalized });
  // whole-value checks
  if (validator.isEmail(s)) add('email', s.toLowerCase());
  if (validator.isIP(s)) add('ip', normalizeIp(s));
  if (SSN.test(s)) add('ssn', s.replace(/-/g, ''));
  const card = cardDigits(s);
  if (card) add('card', card);
  const iban = ibantools.electronicFormatIBAN(s);
  if (iban && ibantools.isValidIBAN(iban)) add('iban', iban);
  if (s.startsWith('+') || phoneField) {
    const phone = parsePhoneNumberFromString(s);
    if (phone?.isValid()) add('phone', phone.number);
  }
  // free text (linear: long tokens are blanked so no pattern scans far from where it starts)
  const text = s.length > MAX_TOKEN ? s.replace(LONG_TOKEN, ' ') : s;
  if (text.includes('@')) for (const m of text.matchAll(EMAIL_IN_TEXT)) if (validator.isEmail(m[0])) add('email', m[0].toLowerCase());
  for (const m of text.matchAll(IBAN_IN_TEXT)) {
    const iban2 = ibantools.electronicFormatIBAN(m[0]);
    if (iban2 && ibantools.isValidIBAN(iban2)) add('iban', iban2);
  }
  for (const m of text.matchAll(CARD_IN_TEXT)) {
    const c = cardDigits(m[0]);
    if (c) add('card', c);
  }
  for (const m of text.matchAll(SSN_IN_TEXT)) if (SSN.test(m[0])) add('ssn', m[0].replace(/-/g, ''));
  for (const m of text.matchAll(IPV4_IN_TEXT)) if (validator.isIP(m[0], 4)) add('ip', m[0]);
  if (text.includes(':')) for (const m of text.matchAll(IPV6_IN_TEXT)) if (m[0].includes('::') || m[0].split(':').length === 8) if (validator.isIP(m[0], 6)) add('ip', normalizeIp(m[0]));
  if (text.includes('+')) {
    for (const m of text.matchAll(PHONE_IN_TEXT)) {
      const phone = parsePhoneNumberFromString(m[0]);
      if (phone?.isValid()) add('phone', phone.number);
      else for (const p of findPhoneNumbersInText(m[0])) if (p.number.isValid()) add('phone', p.number.number);
    }
  }
  return [...found.values()].sort((a, b) => IDENTIFIER_PRIORITY.indexOf(a.kind) - IDENTIFIER_PRIORITY.indexOf(b.kind));
}

/** Personal data in a scalar JSON value (strings, and numbers that may be card numbers or named fields). */
export function detectInValue(value: unknown, fieldName?: string): ValueFindings {
  if (typeof value === 'string') return detectInString(value, fieldName);
  if (typeof value === 'number' && Number.isFinite(value)) {
    // a whole number of at most 12 digits is not scanned: written with digits alone, an identifier can only
    // be a card number (13 to 19 digits), or a phone field's number
    const scanned = Number.isSafeInteger(value) && (Math.abs(value) >= 1e12 || isPhoneField(fieldName));
    const r = detectInString(scanned ? String(value) : '', fieldName);
    if (!r.kinds.includes('named_field') && isNamedPiiField(fieldName)) r.kinds.push('named_field');
    return r;
  }
  return { kinds: [], identifiers: [] };
}
