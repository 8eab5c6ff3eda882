import { createLogger } from '@agw/shared';
import type { audit as pb } from '@agw/proto';
import type { VaultClient } from '../clients/grpc-clients';
import { markErasedRecords } from './erased-pii-marker';

const logger = createLogger('test', 'silent');
const env = (subject: string, extra: Record<string, unknown> = {}) => ({ $pii: { ct: 'Y3Q=', iv: 'aXY=', v: 1, tag: 'dGFn', kind: 'email', subject, ...extra } });
const rec = (params: unknown): pb.AuditRecord => ({ id: 1, tenant_seq: 0, prev_hash: 'GENESIS', record_hash: 'h', event_queued: false, commit_ms: 0, receipt: undefined, entry: { params: { text: JSON.stringify(params) } } as pb.AuditEntry });

/** A vault that knows which subjects are erased (the one RPC the marker uses). */
function vaultWith(erased: string[], calls: string[][] = []): VaultClient {
  return {
    filterErasedSubjects: async (req: { subject_ids: string[] }) => {
      calls.push(req.subject_ids);
      return { tenant_id: 't', subject_ids: req.subject_ids.filter((s) => erased.includes(s)) };
    },
  } as unknown as VaultClient;
}

describe('markErasedRecords', () => {
  test('adds erased: true to the envelopes of erased subjects only, whatever the key order, at any depth', async () => {
    const records = [rec({ a: env('sub_1'), list: [env('sub_2'), { deep: env('sub_1') }], plain: 'x' })];
    const [out] = await markErasedRecords(vaultWith(['sub_1']), 't', records, logger);
    const p = JSON.parse(out.entry!.params!.text);
    expect(p.a.$pii).toEqual({ ...env('sub_1').$pii, erased: true });
    expect(p.list[0]).toEqual(env('sub_2'));
    expect(p.list[1].deep.$pii.erased).toBe(true);
    expect(p.plain).toBe('x');
    // the stored record is not changed
    expect(JSON.parse(records[0].entry!.params!.text).a.$pii.erased).toBeUndefined();
  });

  test('no envelopes: no vault call; objects that merely contain a $pii key among others are not envelopes', async () => {
    const calls: string[][] = [];
    const records = [rec({ q: 'hello' }), rec({ $pii: { v: 1, subject: 'sub_9' }, other: 1 })];
    expect(await markErasedRecords(vaultWith(['sub_9'], calls), 't', records, logger)).toBe(records);
    expect(calls).toEqual([]);
  });

  test('vault unreachable: records are shown unmarked', async () => {
    const down = { filterErasedSubjects: async () => Promise.reject(new Error('unavailable')) } as unknown as VaultClient;
    const records = [rec({ a: env('sub_1') })];
    expect(await markErasedRecords(down, 't', records, logger)).toBe(records);
  });
});
