import { detectInString, detectInValue, isNamedPiiField, luhn, scanIdentifiers } from './pii-detector';

const kinds = (s: string, field?: string) => detectInString(s, field).kinds;

describe('pii-detector', () => {
  test('Luhn', () => {
    expect(luhn('4111111111111111')).toBe(true);
    expect(luhn('4111111111111112')).toBe(false);
    expect(luhn('79927398713')).toBe(true);
    expect(luhn('')).toBe(false);
  });

  test('e-mail addresses, whole and in free text, normalised to lower case', () => {
    expect(detectInString('Ada.Lovelace@Example.COM').identifiers).toEqual([{ kind: 'email', normalized: 'ada.lovelace@example.com' }]);
    expect(detectInString('please write to bob@example.org today').identifiers).toEqual([{ kind: 'email', normalized: 'bob@example.org' }]);
    expect(kinds('not-an-email@')).toEqual([]);
  });

  test('phone numbers in international format (libphonenumber-js), E.164 normalised', () => {
    expect(detectInString('+44 20 7946 0958').identifiers).toEqual([{ kind: 'phone', normalized: '+442079460958' }]);
    expect(detectInString('call +1 415 555 2671 now').identifiers).toContainEqual({ kind: 'phone', normalized: '+14155552671' });
    // a national number counts only in a phone field
    expect(kinds('020 7946 0958')).toEqual([]);
    expect(kinds('+44 20 7946 0958', 'phone')).toEqual(['phone', 'named_field']);
  });

  test('IBANs with a valid checksum (ibantools)', () => {
    expect(detectInString('DE89 3704 0044 0532 0130 00').identifiers).toEqual([{ kind: 'iban', normalized: 'DE89370400440532013000' }]);
    expect(detectInString('pay to GB82WEST12345698765432 please').identifiers).toEqual([{ kind: 'iban', normalized: 'GB82WEST12345698765432' }]);
    expect(kinds('DE89 3704 0044 0532 0130 01')).toEqual([]);
  });

  test('payment cards need an issuer pattern and Luhn', () => {
    expect(detectInString('4111 1111 1111 1111').identifiers).toEqual([{ kind: 'card', normalized: '4111111111111111' }]);
    expect(detectInValue(5555555555554444).identifiers).toEqual([{ kind: 'card', normalized: '5555555555554444' }]);
    expect(kinds('4111 1111 1111 1112')).toEqual([]);
    expect(kinds('order 1234567890123 shipped')).toEqual([]);
  });

  test('IP addresses and US SSNs', () => {
    expect(detectInString('203.0.113.7').identifiers).toEqual([{ kind: 'ip', normalized: '203.0.113.7' }]);
    expect(detectInString('from 2001:db8::1 at noon').identifiers).toEqual([{ kind: 'ip', normalized: '2001:db8::1' }]);
    expect(detectInString('123-45-6789').identifiers).toEqual([{ kind: 'ssn', normalized: '123456789' }]);
    expect(kinds('000-12-3456')).toEqual([]);
  });

  test('named fields are personal data whatever their value', () => {
    expect(isNamedPiiField('first_name')).toBe(true);
    expect(isNamedPiiField('Date-Of-Birth')).toBe(true);
    expect(isNamedPiiField('amount')).toBe(false);
    expect(kinds('Ada', 'name')).toEqual(['named_field']);
    expect(detectInValue(19151210, 'dob').kinds).toEqual(['named_field']);
    expect(kinds('', 'name')).toEqual([]);
  });

  test('ordinary values are not personal data', () => {
    for (const s of ['hello', '2026-11-21', '1500', 'b3c1f0de-7a4f-4c55-9d7e-4b1c2a3d4e5f', 'SELECT * FROM t LIMIT 10', 'https://example.com/a?b=1', 'v1.2.3']) {
      expect(kinds(s)).toEqual([]);
    }
    expect(detectInValue(1500).kinds).toEqual([]);
    expect(detectInValue(true, 'name').kinds).toEqual([]);
  });

  test('several identifiers in one text come back in priority order', () => {
    const r = detectInString('card 4111111111111111, mail ada@example.com, phone +442079460958');
    expect(r.identifiers.map((i) => i.kind)).toEqual(['email', 'phone', 'card']);
  });

  describe('values without a digit, @, : or + are not scanned', () => {
    // what such a value may hold: letters (hex digits and IBAN country codes among them), other scripts,
    // digits and signs of other scripts (full-width, Arabic-Indic), punctuation and spaces
    const ALPHABET = [...'abcdefABCDEFxyzXYZ DE GB FR-._,;!?/\\()[]{}#$%&*=~\'"\t\n', 'é', 'ß', 'Ж', '中', '０', '９', '٣', '＠', '＋', '：', '۱', '\u00a0'];
    let seed = 26;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const randomValue = () => Array.from({ length: 1 + Math.floor(next() * 40) }, () => ALPHABET[Math.floor(next() * ALPHABET.length)]).join('');

    test('the full scan finds nothing in them either (so skipping it changes no finding)', () => {
      const values = [
        'benchmark',
        'DEab cdef ghij klmn',
        'fe dead beef cafe',
        'ada at example dot com',
        'ada＠example.com',
        '＋４４ ２０７９ ４６０９５８',
        '٠١٢٣٤٥٦٧٨٩',
        'ffff ffff ffff ffff',
        ...Array.from({ length: 3000 }, randomValue),
      ];
      for (const v of values) {
        expect({ v, marked: /[0-9@:+]/.test(v) }).toEqual({ v, marked: false });
        expect({ v, found: scanIdentifiers(v.trim()) }).toEqual({ v, found: [] });
        expect(detectInString(v).identifiers).toEqual([]);
      }
    });

    test('whole numbers of at most 12 digits: the full scan finds nothing in them either', () => {
      const numbers = [0, 1, -1, 42, 123456789, 999999999999, -999999999999, 4111111111, 192168001001, ...Array.from({ length: 3000 }, () => Math.floor(next() * 1e12) * (next() < 0.5 ? -1 : 1))];
      for (const n of numbers) {
        expect({ n, found: scanIdentifiers(String(n)) }).toEqual({ n, found: [] });
        expect(detectInValue(n, 'amount')).toEqual({ kinds: [], identifiers: [] });
      }
      // longer ones are scanned (a card number), a named field still counts, a phone field is still parsed
      expect(detectInValue(4111111111111111, 'amount').kinds).toEqual(['card']);
      expect(detectInValue(1234, 'ssn').kinds).toEqual(['named_field']);
      expect(detectInValue(442079460958, 'phone')).toEqual(detectInString('442079460958', 'phone'));
    });

    test('a phone field is still parsed, and a named field still counts', () => {
      expect(scanIdentifiers('＋４４ ２０７９ ４６０９５８', true).map((i) => i.kind)).toEqual(
        detectInString('＋４４ ２０７９ ４６０９５８', 'phone').identifiers.map((i) => i.kind),
      );
      expect(kinds('Ada Lovelace', 'full_name')).toEqual(['named_field']);
      expect(kinds('ada@example.com')).toEqual(['email']);
      expect(kinds('call +44 20 7946 0958')).toEqual(['phone']);
      expect(kinds('fe80::1')).toEqual(['ip']);
    });
  });
});
