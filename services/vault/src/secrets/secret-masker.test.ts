import { MASK, SecretMasker, secretForms } from './secret-masker';

const secret = 'SECRET-TOKEN-abc123/"q\\+ü';

describe('SecretMasker', () => {
  const m = new SecretMasker([secret]);

  test('the raw secret, anywhere in a string', () => {
    expect(m.text(`Bearer ${secret} and again ${secret}.`)).toBe(`Bearer ${MASK} and again ${MASK}.`);
  });

  test('JSON-escaped: the secret inside a JSON document returned as text', () => {
    const doc = JSON.stringify({ headers: { authorization: `Bearer ${secret}` } });
    expect(doc).not.toContain(secret);
    const masked = m.text(doc);
    expect(masked).toBe(JSON.stringify({ headers: { authorization: `Bearer ${MASK}` } }));
  });

  test('\\u-escaped, lower and upper case', () => {
    const esc = [...secret].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
    expect(m.text(`x ${esc} y`)).toBe(`x ${MASK} y`);
    expect(m.text(`x ${esc.replace(/\\u([0-9a-f]{4})/g, (_, h: string) => `\\u${h.toUpperCase()}`)} y`)).toBe(`x ${MASK} y`);
  });

  test('URL-encoded, as a query or a form encodes it', () => {
    expect(m.text(`https://e.example/?auth=${encodeURIComponent(secret)}&x=1`)).toBe(`https://e.example/?auth=${MASK}&x=1`);
    const tricky = new SecretMasker(["it's (a) ~secret! *here*"]);
    expect(tricky.text(new URLSearchParams({ p: "it's (a) ~secret! *here*" }).toString())).toBe(`p=${MASK}`);
    expect(tricky.text(encodeURIComponent("it's (a) ~secret! *here*"))).toBe(MASK);
    const spaced = new SecretMasker(['pass word with spaces']);
    expect(spaced.text(`a=${new URLSearchParams({ p: 'pass word with spaces' }).toString()}`)).toBe(`a=p=${MASK}`);
  });

  test('base64 and base64url, alone and inside a longer encoded text at every alignment', () => {
    expect(m.text(Buffer.from(secret).toString('base64'))).toBe(MASK);
    for (const prefix of ['', 'a', 'ab', 'Authorization: Bearer ', 'client:']) {
      for (const suffix of ['', 'z', 'yz', '\r\nHost: x']) {
        const b64 = Buffer.from(`${prefix}${secret}${suffix}`).toString('base64');
        const masked = m.text(b64);
        expect(masked).toContain(MASK);
        // what is left cannot be decoded back to the secret
        expect(Buffer.from(masked.replace(MASK, ''), 'base64').toString('utf8')).not.toContain(secret.slice(0, 8));
        expect(m.text(b64.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, ''))).toContain(MASK);
      }
    }
  });

  test('a parsed result: every string and key, the value itself when nothing matched', () => {
    const result = { content: [{ type: 'text', text: `auth: Bearer ${secret}` }, { type: 'image', data: Buffer.from(`xx${secret}`).toString('base64') }], [secret]: 1 };
    const masked = m.value(result);
    expect(JSON.stringify(masked)).not.toContain('SECRET-TOKEN');
    expect(masked.content[0]).toEqual({ type: 'text', text: `auth: Bearer ${MASK}` });
    expect((masked as Record<string, unknown>)[MASK]).toBe(1);
    const clean = { content: [{ type: 'text', text: 'nothing here' }] };
    expect(m.value(clean)).toBe(clean);
  });

  test('short secrets and no secrets mask nothing', () => {
    expect(secretForms('abc')).toEqual([]);
    const none = new SecretMasker([]);
    expect(none.empty).toBe(true);
    expect(none.text('abc')).toBe('abc');
  });
});
