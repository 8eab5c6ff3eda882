import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { actionRecordFields, canonicalJson } from '@agw/shared';
import { HASHED_KEYS } from '@agw/verifier';
import { type ChainEntry, GENESIS, canonicalContent, hashedContent, recordHash } from './record-hash';

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
  it('hashes the keys the chain hashes: every field of the record message', () => {
    expect([...HASHED_KEYS].sort()).toEqual([...actionRecordFields].sort());
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
