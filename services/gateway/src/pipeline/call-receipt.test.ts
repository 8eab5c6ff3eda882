import { createHash } from 'node:crypto';
import { answerReceipt, callEvidence, receiptHeader, withReceiptMeta } from './call-receipt';

describe('a call\'s receipt helpers', () => {
  it('hashes the arguments as SHA-256(salt || JCS(arguments)) with a fresh 16-byte salt per call', () => {
    const a = callEvidence({ b: [1, 'x'], a: { z: null, y: 1.5 } });
    const b = callEvidence({ a: { y: 1.5, z: null }, b: [1, 'x'] });
    expect(a.salt).toHaveLength(16);
    expect(a.salt.equals(b.salt)).toBe(false);
    const expected = (salt: Buffer) => createHash('sha256').update(Buffer.concat([salt, Buffer.from('{"a":{"y":1.5,"z":null},"b":[1,"x"]}', 'utf8')])).digest('hex');
    expect(a.argumentsSha256).toBe(expected(a.salt));
    expect(b.argumentsSha256).toBe(expected(b.salt));
  });

  it('answers the receipt with the salt, or nothing when none was signed; MCP results keep their _meta', () => {
    const ev = callEvidence({ q: 1 });
    expect(answerReceipt(ev)).toBeUndefined();
    ev.receipt = { note: 'agw-receipt/v1\n…\n', key: 'agw-receipt-key/v1\n…\n' };
    const r = answerReceipt(ev)!;
    expect(r).toEqual({ note: ev.receipt.note, key: ev.receipt.key, arguments_salt: ev.salt.toString('base64') });
    expect(Buffer.from(receiptHeader(r), 'base64url').toString('utf8')).toBe(ev.receipt.note);
    expect(withReceiptMeta({ content: [], _meta: { 'io.agw/action_id': 'x' } }, r)).toEqual({ content: [], _meta: { 'io.agw/action_id': 'x', 'io.agw/receipt': r } });
    expect(withReceiptMeta({ content: [] }, undefined)).toEqual({ content: [] });
  });
});
