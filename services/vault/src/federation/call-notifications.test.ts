import { SecretMasker } from '../secrets/secret-masker';
import { type CallNotification, MAX_NOTIFICATION_TEXT, MAX_RELAYED_NOTIFICATIONS, NotificationRelay, clipUtf8, relayOfCurrentCall, withRelay } from './call-notifications';

const SECRET = 'sk-live-0123456789abcdef';

function relay(wish: { progress?: boolean; logLevel?: 'debug' | 'info' | 'warning' | 'error' } = { progress: true, logLevel: 'debug' }) {
  const sent: CallNotification[] = [];
  const masker = new SecretMasker([SECRET]);
  return { r: new NotificationRelay({ progress: wish.progress ?? false, logLevel: wish.logLevel, send: (n) => sent.push(n) }, () => masker), sent };
}

describe('NotificationRelay: what an upstream sends during a call, bounded', () => {
  test('progress passes with its total and message; a malformed one is dropped', () => {
    const { r, sent } = relay();
    r.progress({ progress: 1, total: 4, message: 'one' });
    r.progress({ progress: 2 });
    r.progress({ progress: 'three' });
    r.progress({ progress: Number.NaN });
    expect(sent).toEqual([
      { kind: 'progress', progress: 1, total: 4, message: 'one' },
      { kind: 'progress', progress: 2 },
    ]);
  });

  test('progress is not relayed when the client did not ask for it', () => {
    const { r, sent } = relay({ logLevel: 'debug' });
    r.progress({ progress: 1 });
    expect(sent).toEqual([]);
  });

  test('log messages at the asked level and above; none when no level was asked; an unknown level is dropped', () => {
    const { r, sent } = relay({ logLevel: 'warning' });
    r.log({ level: 'info', data: 'quiet' });
    r.log({ level: 'error', logger: 'db', data: { code: 7 } });
    r.log({ level: 'loud', data: 'x' });
    expect(sent).toEqual([{ kind: 'log', level: 'error', logger: 'db', data: { text: '{"code":7}' } }]);
    const none = relay({ progress: true });
    none.r.log({ level: 'emergency', data: 'x' });
    expect(none.sent).toEqual([]);
  });

  test('a credential is masked in every field, in any spelling the masker knows', () => {
    const { r, sent } = relay();
    r.progress({ progress: 1, message: `token ${SECRET}` });
    r.log({ level: 'info', logger: SECRET, data: { header: `Bearer ${SECRET}`, b64: Buffer.from(SECRET).toString('base64') } });
    const text = JSON.stringify(sent);
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain(Buffer.from(SECRET).toString('base64'));
    expect(text).toContain('[redacted]');
  });

  test('texts are clipped to 4 KB; a larger data becomes its clipped JSON text', () => {
    const { r, sent } = relay();
    const long = 'é'.repeat(MAX_NOTIFICATION_TEXT);
    r.progress({ progress: 1, message: long });
    r.log({ level: 'info', data: { big: 'x'.repeat(10_000) } });
    const [p, l] = sent as [Extract<CallNotification, { kind: 'progress' }>, Extract<CallNotification, { kind: 'log' }>];
    expect(Buffer.byteLength(p.message!)).toBeLessThanOrEqual(MAX_NOTIFICATION_TEXT);
    expect(p.message!.endsWith('é')).toBe(true);
    const data = JSON.parse(l.data.text);
    expect(typeof data).toBe('string');
    expect(Buffer.byteLength(data)).toBeLessThanOrEqual(MAX_NOTIFICATION_TEXT);
    expect(data.startsWith('{"big":"xxx')).toBe(true);
  });

  test(`at most ${MAX_RELAYED_NOTIFICATIONS} per call; the rest are counted, not sent`, () => {
    const { r, sent } = relay();
    for (let i = 0; i < MAX_RELAYED_NOTIFICATIONS + 50; i++) r.progress({ progress: i });
    expect(sent).toHaveLength(MAX_RELAYED_NOTIFICATIONS);
    expect(r.dropped).toBe(50);
  });

  test('clipUtf8 never cuts a character', () => {
    expect(clipUtf8('abc', 2)).toBe('ab');
    expect(clipUtf8('aé', 2)).toBe('a');
    expect(clipUtf8('a😀b', 4)).toBe('a'); // the emoji's 4 bytes do not fit after 'a'
    expect(clipUtf8('a😀b', 5)).toBe('a😀');
    expect(clipUtf8('ab\uFFFDcd', 5)).toBe('ab\uFFFD'); // a replacement character of the text itself is kept
  });

  test('clipUtf8 is the longest whole-character prefix of at most max bytes, on mixed text of any length', () => {
    const pieces = ['a', 'é', '€', '😀', '\uFFFD', ' '];
    const reference = (text: string, max: number) => {
      let out = '';
      for (const ch of text) {
        if (Buffer.byteLength(out + ch) > max) break;
        out += ch;
      }
      return out;
    };
    for (let seed = 1; seed < 300; seed++) {
      let text = '';
      for (let i = 0; i < (seed % 37) + 1; i++) text += pieces[(seed * 7 + i * 13) % pieces.length];
      const max = (seed % 29) + 1;
      expect(clipUtf8(text, max)).toBe(reference(text, max));
    }
    // a huge text is cut as a short one is
    expect(clipUtf8('€'.repeat(5_000_000), 10)).toBe('€€€');
  });

  test('a notification handler finds the relay of the call it runs under, and none outside', async () => {
    const { r } = relay();
    const seen: Array<NotificationRelay | undefined> = [];
    await withRelay(r, async () => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      await Promise.resolve().then(() => seen.push(relayOfCurrentCall()));
    });
    seen.push(relayOfCurrentCall());
    expect(seen).toEqual([r, undefined]);
  });
});
