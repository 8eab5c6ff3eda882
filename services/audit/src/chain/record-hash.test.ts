import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { actionRecordFields, canonicalJson, hashedContentOf, recordFieldsHashedWhenSet } from '@agw/shared';
import { HASHED_KEYS, HASHED_WHEN_SET_KEYS, recomputeRecordHash } from '@agw/verifier';
import { type ChainEntry, GENESIS, canonicalContent, canonicalContentOf, hashedContent, recordHash } from './record-hash';

const entry: ChainEntry = {
  action_id: '00000000-0000-4000-8000-000000000001',
  agent_id: 'agent-1',
  agent_type: 'assistant',
  agent_version: '1.0.0',
  tool: 'svc_web_search',
  method: 'search',
  params: { z: 1, a: 'é', n: 1.5 },
  decision: 'allow',
  violations: [],
  severity: 'none',
  alert_tier: null,
  requires_human: false,
  execution_mode: 'agent_direct',
  source: 'mcp_governed',
  session_id: null,
  bundle_revision: 'rev-1',
  details: {},
  requested_at: '2026-11-21T00:00:00.000Z',
};

describe('record hash', () => {
  it('is SHA-256 of the RFC 8785 canonical JSON followed by the previous hash', () => {
    // Keys sorted, no whitespace, UTF-8: what any JCS implementation produces.
    const canonical =
      '{"action_id":"00000000-0000-4000-8000-000000000001","agent_id":"agent-1","agent_type":"assistant","agent_version":"1.0.0",' +
      '"alert_tier":null,"bundle_revision":"rev-1","decision":"allow","details":{},"execution_mode":"agent_direct","method":"search",' +
      '"params":{"a":"é","n":1.5,"z":1},"requested_at":"2026-11-21T00:00:00.000Z","requires_human":false,"session_id":null,' +
      '"severity":"none","source":"mcp_governed","tool":"svc_web_search","violations":[]}';
    const expected = createHash('sha256').update(Buffer.from(canonical + GENESIS, 'utf8')).digest('hex');
    expect(recordHash(entry, GENESIS)).toBe(expected);
  });

  it('changes when any hashed field or the previous hash changes', () => {
    const h = recordHash(entry, GENESIS);
    expect(recordHash({ ...entry, decision: 'deny' }, GENESIS)).not.toBe(h);
    expect(recordHash({ ...entry, params: { ...entry.params, z: 2 } }, GENESIS)).not.toBe(h);
    expect(recordHash(entry, 'a'.repeat(64))).not.toBe(h);
  });

  it('does not depend on key order', () => {
    const reordered = { ...entry, params: { n: 1.5, z: 1, a: 'é' } };
    expect(recordHash(reordered, GENESIS)).toBe(recordHash(entry, GENESIS));
    expect(Object.keys(hashedContent(entry))).toHaveLength(18);
  });
});

/** The shared vectors (test/fixtures/record-hash-vectors.json), also appended through the SQL functions on Postgres (test/record-hash-vectors.int.test.ts). */
describe('record hash: the offline verifier', () => {
  // @agw/verifier stands alone (a third party runs it on an export), so it lists the hashed keys itself: a field
  // added to the record message is hashed here at once, and the verifier needs it too (with a new export format)
  it('hashes the keys the chain hashes: every field of the record message, those added to written chains when set', () => {
    expect([...HASHED_KEYS, ...HASHED_WHEN_SET_KEYS].sort()).toEqual([...actionRecordFields].sort());
    expect([...HASHED_WHEN_SET_KEYS].sort()).toEqual([...recordFieldsHashedWhenSet].sort());
  });
});

describe('record hash: the shared vectors', () => {
  const { vectors } = JSON.parse(readFileSync(path.join(__dirname, '../../test/fixtures/record-hash-vectors.json'), 'utf8')) as {
    vectors: Array<{ name: string; entry: ChainEntry; canonical: string; prev_hash: string; record_hash: string }>;
  };

  it('are one chain from GENESIS, with awkward content', () => {
    expect(vectors.length).toBeGreaterThanOrEqual(8);
    vectors.forEach((v, i) => expect(v.prev_hash).toBe(i === 0 ? GENESIS : vectors[i - 1].record_hash));
  });

  it.each(vectors.map((v) => [v.name, v]))('%s: canonical JSON and hash as the file says', (_name, v) => {
    expect(canonicalContent(v.entry)).toBe(v.canonical);
    expect(canonicalJson(hashedContent(v.entry))).toBe(v.canonical); // the plain JCS path gives the same bytes
    expect(recordHash(v.entry, v.prev_hash)).toBe(v.record_hash);
    // the digest itself, with no JCS involved: SHA-256 over UTF-8(canonical) || UTF-8(prev_hash)
    expect(createHash('sha256').update(Buffer.from(v.canonical + v.prev_hash, 'utf8')).digest('hex')).toBe(v.record_hash);
  });
});

/**
 * What happens when a field is added to the record (docs/architecture.md, "Adding a field to the record"): the
 * record here gets a `trace_id` the chains were not written with, hashed only when set, as
 * `recordFieldsHashedWhenSet` and the verifier's `HASHED_WHEN_SET_KEYS` would list it.
 */
describe('record hash: a field added to written chains', () => {
  const { vectors } = JSON.parse(readFileSync(path.join(__dirname, '../../test/fixtures/record-hash-vectors.json'), 'utf8')) as {
    vectors: Array<{ name: string; entry: ChainEntry; canonical: string; prev_hash: string; record_hash: string }>;
  };
  const whenSet = new Set(['trace_id']);
  const content = hashedContentOf([...actionRecordFields, 'trace_id'], whenSet);
  const canonical = canonicalContentOf(content, whenSet);
  const verifierKeys = { always: HASHED_KEYS, whenSet: ['trace_id'] };
  const withField = (e: ChainEntry, traceId: string | null) => ({ ...e, trace_id: traceId }) as ChainEntry;

  it.each(vectors.map((v) => [v.name, v]))('%s: written before the field (null), it hashes the bytes it was written with', (_name, v) => {
    const old = withField(v.entry, null);
    expect(canonical(old)).toBe(v.canonical);
    expect(canonicalJson(content(old))).toBe(v.canonical);
    expect(createHash('sha256').update(canonical(old) + v.prev_hash).digest('hex')).toBe(v.record_hash);
    expect(recomputeRecordHash({ ...old, prev_hash: v.prev_hash }, verifierKeys)).toBe(v.record_hash);
  });

  it.each(vectors.map((v) => [v.name, v]))('%s: with the field set, it is hashed, the same by the service and the verifier', (_name, v) => {
    const set = withField(v.entry, 'trace-é-1');
    const text = canonical(set);
    expect(text).toBe(canonicalJson(content(set)));
    expect(text).toContain('"trace_id":"trace-é-1"');
    const h = createHash('sha256').update(text + v.prev_hash).digest('hex');
    expect(h).not.toBe(v.record_hash);
    expect(recomputeRecordHash({ ...set, prev_hash: v.prev_hash }, verifierKeys)).toBe(h);
    // the verifier that does not know the field yet fails the record: an export with it needs a newer verifier
    expect(recomputeRecordHash({ ...set, prev_hash: v.prev_hash })).not.toBe(h);
  });

  it('a field always hashed (the first 18) keeps its null in the content', () => {
    expect(canonicalContent(vectors[0].entry)).toContain('"alert_tier":');
    expect(Object.keys(hashedContent({ ...vectors[0].entry, alert_tier: null, session_id: null }))).toHaveLength(18);
  });
});
