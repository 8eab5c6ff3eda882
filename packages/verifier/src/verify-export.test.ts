/**
 * verifyExport on a small export built here (three records, one tree head, its checkpoint signed with a
 * fresh Ed25519 key): record ids are checked against the leaves from format 1.2 on (the tenant's own ids,
 * leaf index + 1), and exports of 1.1 (global row keys as ids) still verify. Nothing here uses the services'
 * code: the hashes are RFC 8785 + SHA-256 and RFC 9162 computed with node:crypto.
 */
import { createHash, generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { keyIdOf, parseVerifierKey } from './signed-note';
import type { ComplianceExport } from './export-format';
import { hasTenantRecordIds, recomputeRecordHash, verifyExport } from './verify-export';

const H = (...parts: Buffer[]) => createHash('sha256').update(Buffer.concat(parts)).digest();
const leaf = (recordHash: string) => H(Buffer.from([0]), Buffer.from(recordHash, 'hex'));
const node = (l: Buffer, r: Buffer) => H(Buffer.from([1]), l, r);

const tenant = randomUUID();
const name = `localhost/agw/${tenant}`;
const { publicKey, privateKey } = generateKeyPairSync('ed25519');
const pub = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
const keyId = keyIdOf(name, pub);
const vkey = `${name}+${keyId.toString('hex')}+${Buffer.concat([Buffer.from([1]), pub]).toString('base64')}`;
const key = parseVerifierKey(vkey);

function signedCheckpoint(size: number, rootHex: string): string {
  const text = `${name}\n${size}\n${Buffer.from(rootHex, 'hex').toString('base64')}\n`;
  const sig = sign(null, Buffer.from(text, 'utf8'), privateKey);
  return `${text}\n\u2014 ${name} ${Buffer.concat([keyId, sig]).toString('base64')}\n`;
}

/** three chained records, a tree head over them, two sample proofs; `ids` are the records' ids */
function exportDoc(formatVersion: string, ids: number[]): ComplianceExport {
  const records: ComplianceExport['audit_records'] = [];
  let prev = 'GENESIS';
  for (let i = 0; i < 3; i++) {
    const content = {
      action_id: randomUUID(), agent_id: 'agent-1', agent_type: 'assistant', agent_version: '1.0.0', tool: 'svc_web_search', method: 'search',
      params: { q: `q${i}` }, decision: 'allow', violations: [], severity: 'none', alert_tier: null, requires_human: false, execution_mode: 'agent_direct',
      source: 'mcp_governed', session_id: null, bundle_revision: 'rev', details: {}, requested_at: new Date(Date.UTC(2026, 11, 2, 10, 0, i)).toISOString(),
    };
    const r = { id: ids[i], leaf_index: i, ...content, prev_hash: prev, record_hash: '' };
    r.record_hash = recomputeRecordHash(r);
    prev = r.record_hash;
    records.push(r);
  }
  const [l0, l1, l2] = records.map((r) => leaf(r.record_hash));
  const root = node(node(l0, l1), l2).toString('hex');
  const sample = (i: number, proof: Buffer[]) => ({
    record_id: ids[i], record_hash: records[i].record_hash, leaf_index: i, leaf_hash: leaf(records[i].record_hash).toString('hex'),
    tree_index: 0, tree_size: 3, merkle_root: root, proof: proof.map((p) => p.toString('hex')), verified: true,
  });
  const note = signedCheckpoint(3, root);
  const at = records[0].requested_at as string;
  // the sections agw-verify does not read are filled in only as far as the type asks
  return {
    package: { tenant_id: tenant, format_version: formatVersion, standard: 'AGCS v0.9', generated_at: at, range: { from: at, to: at } },
    summary: { total: 3, by_decision: { allow: 3 }, by_severity: { none: 3 }, distinct_agents: 1, distinct_tools: 1, first_at: at, last_at: at, records_exported: 3, truncated: false },
    audit_records: records,
    chain_verification: { valid: true, record_count: 3 },
    merkle: { algorithm: 'RFC 9162', leaf: 'record_hash', tree_heads_total: 1, latest_tree: null, trees_in_range: [] },
    sample_inclusion_proofs: [sample(0, [l1, l2]), sample(2, [node(l0, l1)])],
    anchors: { status: 'ok', references: [] },
    policy_snapshot: { status: 'unavailable' },
    evidence: {
      status: 'ok',
      checkpoints: [{ tree_index: 0, tree_size: 3, merkle_root: root, checkpoint_sha256: createHash('sha256').update(note, 'utf8').digest('hex'), note }],
      verifier_key: vkey,
      origin: name,
      tree_heads: [{ tree_index: 0, tree_size: 3, merkle_root: root }],
      consistency_proofs: [],
      chain: { chain_id: null, contract_address: null, network: null },
    },
  };
}

const failures = (results: Awaited<ReturnType<typeof verifyExport>>) => results.filter((r) => !r.ok);

describe('record ids in a compliance export', () => {
  it('verifies a 1.2 export whose ids are the tenant’s (leaf index + 1)', async () => {
    const results = await verifyExport(exportDoc('1.2', [1, 2, 3]), key);
    expect(failures(results)).toEqual([]);
    expect(results.map((r) => r.name)).toEqual(['verifier key', 'record hashes', 'chain links', 'record ids', 'checkpoint signatures', 'consistency', 'inclusion proofs', 'anchor proofs']);
    expect(results.find((r) => r.name === 'record ids')?.detail).toBe("3 records and 2 samples: id = leaf index + 1 (the tenant's own numbering)");
  });

  it('fails a 1.2 export naming a record whose id is not its leaf index + 1 (e.g. a global row key); ids are not hashed', async () => {
    const results = await verifyExport(exportDoc('1.2', [1, 4711, 3]), key);
    expect(failures(results)).toEqual([{ name: 'record ids', ok: false, detail: 'record 4711 is leaf 1: its id must be 2 (leaf index + 1)' }]);
  });

  it('fails a 1.2 export whose sample proof names another record id than its leaf', async () => {
    const doc = exportDoc('1.2', [1, 2, 3]);
    doc.sample_inclusion_proofs[1].record_id = 9;
    expect(failures(await verifyExport(doc, key))).toEqual([{ name: 'record ids', ok: false, detail: 'sample of record 9 is leaf 2: its record_id must be 3 (leaf index + 1)' }]);
  });

  it('still verifies a 1.1 export, whose ids were global row keys, and says the ids were not checked', async () => {
    const results = await verifyExport(exportDoc('1.1', [1001, 1005, 1010]), key);
    expect(failures(results)).toEqual([]);
    expect(results.find((r) => r.name === 'record ids')?.detail).toBe('format 1.1: record ids are global row keys, not tied to leaves (per-tenant ids from format 1.2)');
  });

  it('reads the format version', () => {
    expect(['1.0', '1.1', '1.2', '1.10', '2.0', 'x', ''].map(hasTenantRecordIds)).toEqual([false, false, true, true, true, false, false]);
  });
});
