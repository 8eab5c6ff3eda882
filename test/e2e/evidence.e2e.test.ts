/**
 * Evidence anyone can check offline, through the public API and the agw-verify CLI only: signed
 * checkpoints (C2SP tlog-checkpoint in a C2SP signed note) of every tree head with the published verifier
 * key, a signed erasure statement, and the CLI on a real compliance export: it passes (also against the
 * local chain with --rpc), then fails naming the first failure on a flipped byte in a record, a dropped
 * record, a forged inclusion proof and a swapped checkpoint.
 */
import { execFileSync } from 'node:child_process';
import { createHash, createPublicKey, verify } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Tenant, api, call, newTenant, recordRaw } from './support/api';
import { E2E_OFFSET } from './support/e2e-env';

const CLI = path.resolve(__dirname, '../../packages/verifier/dist/cli.js');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agw-evidence-'));

function runCli(args: string[]): { code: number; out: string } {
  try {
    return { code: 0, out: execFileSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 30_000 }) };
  } catch (e) {
    const err = e as { status: number; stdout: string };
    return { code: err.status, out: err.stdout };
  }
}

function verifyExportFile(doc: unknown, vkeyFile: string, extra: string[] = []) {
  const file = path.join(dir, `export-${Math.random().toString(36).slice(2)}.json`);
  fs.writeFileSync(file, JSON.stringify(doc));
  return runCli([file, '--vkey', vkeyFile, ...extra]);
}

// a 15-line reading of the note (C2SP signed-note), independent of the CLI and the services
function noteVerifies(note: string, vkey: string): boolean {
  const [name, idHex, b64] = [vkey.slice(0, vkey.indexOf('+')), vkey.split('+')[1], vkey.slice(vkey.indexOf('+', vkey.indexOf('+') + 1) + 1)];
  const pub = Buffer.from(b64, 'base64').subarray(1);
  const split = note.lastIndexOf('\n\n');
  const text = note.slice(0, split + 1);
  const [, keyName, sigB64] = /^\u2014 (\S+) (\S+)$/.exec(note.slice(split + 2, -1))!;
  const sig = Buffer.from(sigB64, 'base64');
  const spki = createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), pub]), format: 'der', type: 'spki' });
  return keyName === name && sig.subarray(0, 4).toString('hex') === idHex && verify(null, Buffer.from(text), spki, sig.subarray(4));
}

describe('evidence: signed checkpoints, signed erasure, the offline verifier', () => {
  let t: Tenant;
  let vkey: string;
  let vkeyFile: string;

  beforeAll(async () => {
    t = await newTenant('Evidence');
  });

  it('publishes a signed checkpoint of every tree head and the verifier key', async () => {
    for (let i = 0; i < 3; i++) expect([200, 202, 403]).toContain((await call(t.apiKey, { params: { q: `evidence ${i}` } })).status);
    expect((await api('GET', '/audit/checkpoints/latest', { key: t.apiKey })).status).toBe(404);
    const t1 = await api('POST', '/anchor/trigger', { key: t.apiKey });
    expect(t1.body).toMatchObject({ status: 'anchored', tree_size: 3 });

    const key = await api('GET', '/audit/verifier-key', { key: t.apiKey });
    expect(key.status).toBe(200);
    vkey = key.body.vkey;
    expect(key.body).toMatchObject({ key_name: `localhost/agw/${t.tenantId}`, algorithm: 'Ed25519' });
    expect(vkey).toMatch(new RegExp(`^localhost/agw/${t.tenantId}\\+[0-9a-f]{8}\\+[A-Za-z0-9+/]{44}$`));
    vkeyFile = path.join(dir, 'vkey');
    fs.writeFileSync(vkeyFile, `${vkey}\n`);

    const latest = await api('GET', '/audit/checkpoints/latest', { key: t.apiKey });
    expect(latest.status).toBe(200);
    expect(latest.body).toMatchObject({ origin: `localhost/agw/${t.tenantId}`, tree_size: 3, tree_index: 0, merkle_root: t1.body.tenant_root });
    const note: string = latest.body.checkpoint;
    expect(note.startsWith(`localhost/agw/${t.tenantId}\n3\n${Buffer.from(t1.body.tenant_root, 'hex').toString('base64')}\n\n\u2014 localhost/agw/${t.tenantId} `)).toBe(true);
    expect(noteVerifies(note, vkey)).toBe(true);
    expect(latest.body.checkpoint_sha256).toBe(createHash('sha256').update(note).digest('hex'));

    const asText = await fetch(`http://127.0.0.1:${8080 + E2E_OFFSET}/api/audit/checkpoints/3?format=note`, { headers: { 'x-api-key': t.apiKey } });
    await recordRaw('GET', asText.url, asText);
    expect(asText.headers.get('content-type')).toMatch(/^text\/plain/);
    // the text form is the signed note followed by the witnesses' cosignature lines (witness.e2e.test.ts)
    expect(await asText.text()).toBe(latest.body.cosigned_checkpoint);
    expect(latest.body.cosigned_checkpoint.startsWith(note)).toBe(true);
    expect((await api('GET', '/audit/checkpoints/4', { key: t.apiKey })).status).toBe(404);
    expect((await api('GET', '/audit/checkpoints/zero', { key: t.apiKey })).status).toBe(422);

    // another tenant sees its own log, not this one
    const other = await newTenant('Evidence other');
    expect((await api('GET', '/audit/verifier-key', { key: other.apiKey })).body.key_name).toBe(`localhost/agw/${other.tenantId}`);
    expect((await api('GET', '/audit/checkpoints/3', { key: other.apiKey })).status).toBe(404);
  });

  it('records an erasure on the chain and returns it as a signed statement', async () => {
    const r = await call(t.apiKey, { tool: 'svc_crm_update', method: 'update', params: { customer: { email: 'evidence.subject@example.com' } } });
    expect([200, 202, 403]).toContain(r.status);
    const subject = (await api('POST', '/audit/subjects/lookup', { key: t.apiKey, body: { identifier: 'evidence.subject@example.com' } })).body.subject_id;
    const erased = await api('POST', `/audit/erase/${subject}`, { key: t.apiKey });
    expect(erased.status).toBe(200);
    expect(erased.body).toMatchObject({ status: 'erased', subject_id: subject, records_affected: 1, already_erased: false, verifier_key: vkey });
    const statement: string = erased.body.signed_statement;
    expect(noteVerifies(statement, vkey)).toBe(true);
    expect(statement).toContain(`agw-erasure-statement/v1\norigin localhost/agw/${t.tenantId}\nsubject_id ${subject}\nkey_handle ${erased.body.key_handle}\n`);
    expect(statement).toContain(`\nrecords_affected 1\naction_id ${erased.body.erasure_record.action_id}\nrecord_hash ${erased.body.erasure_record.record_hash}\n`);
    expect(statement).not.toContain('evidence.subject@example.com');

    // the record is on the chain (control_plane, no personal data) and the chain stays valid
    const log = await api('GET', '/audit/log?limit=1', { key: t.apiKey });
    expect(log.body.records[0]).toMatchObject({ source: 'control_plane', tool: 'agw.subjects', method: 'erase', record_hash: erased.body.erasure_record.record_hash });
    // the erasure record is named by the tenant's record id (3 calls + the call above + the erasure = 5), as the log shows it
    expect(erased.body.erasure_record).toMatchObject({ id: 5, leaf_index: 4 });
    expect(log.body.records[0].id).toBe(5);
    expect(JSON.stringify(log.body.records[0])).not.toContain('evidence.subject@example.com');
    expect((await api('GET', '/audit/verify', { key: t.apiKey })).body).toMatchObject({ valid: true });

    // erasing again returns the same record and statement (Ed25519 is deterministic)
    const again = await api('POST', `/audit/erase/${subject}`, { key: t.apiKey });
    expect(again.body).toMatchObject({ already_erased: true, erasure_record: erased.body.erasure_record, signed_statement: statement });

    // the CLI checks a statement with the published key
    const file = path.join(dir, 'statement.note');
    fs.writeFileSync(file, statement);
    const ok = runCli(['--statement', file, '--vkey', vkeyFile]);
    expect(ok.code).toBe(0);
    expect(ok.out).toContain(`ok   erasure statement: signed by localhost/agw/${t.tenantId}`);
    fs.writeFileSync(file, statement.replace('records_affected 1', 'records_affected 0'));
    expect(runCli(['--statement', file, '--vkey', vkeyFile])).toMatchObject({ code: 1, out: expect.stringContaining('FAIL erasure statement: the signature of') });
  });

  it('agw-verify passes on a real export, then names the first failure of each tampering', async () => {
    for (let i = 0; i < 3; i++) await call(t.apiKey, { params: { q: `evidence more ${i}` } });
    const t2 = await api('POST', '/anchor/trigger', { key: t.apiKey });
    expect(t2.body).toMatchObject({ status: 'anchored', tree_index: 1 });
    const exp = await api('GET', `/compliance/export/${t.tenantId}?format=json`, { key: t.apiKey });
    expect(exp.status).toBe(200);
    const doc = exp.body;
    expect(doc.package.format_version).toBe('1.2');
    // record ids are the tenant's own: 1..n, each its leaf index + 1 (the CLI checks it: "record ids")
    expect(doc.audit_records.map((r: { id: number }) => r.id)).toEqual(doc.audit_records.map((_: unknown, i: number) => i + 1));
    for (const s of doc.sample_inclusion_proofs) expect(s.record_id).toBe(s.leaf_index + 1);
    expect(doc.evidence).toMatchObject({ status: 'ok', verifier_key: vkey, origin: `localhost/agw/${t.tenantId}`, chain: { chain_id: 31337 } });
    expect(doc.evidence.checkpoints).toHaveLength(2);
    expect(doc.evidence.consistency_proofs).toHaveLength(1);
    expect(doc.audit_records.length).toBeGreaterThanOrEqual(8);

    // each anchor commits to its head's signed checkpoint note (its SHA-256 is in the 88-byte aggregate leaf)
    const refs = doc.anchors.references as Array<{ tree_size: number; checkpoint_sha256: string | null; tx_hash: string; aggregate_root: string }>;
    expect(refs.length).toBe(2);
    for (const a of refs) {
      const c = doc.evidence.checkpoints.find((x: { tree_size: number }) => x.tree_size === a.tree_size);
      expect(a.checkpoint_sha256).toBe(createHash('sha256').update(c.note, 'utf8').digest('hex'));
    }
    expect((await api('GET', '/anchor/status', { key: t.apiKey })).body.last_anchor).toMatchObject({ checkpoint_sha256: refs[1].checkpoint_sha256 });

    const pass = verifyExportFile(doc, vkeyFile);
    expect(pass.code).toBe(0);
    expect(pass.out).toMatch(/^ok   anchor proofs: 2 anchored heads = signed checkpoints, aggregate proofs verify; 2 of them anchor the signed checkpoint note itself$/m);
    expect(pass.out).toMatch(new RegExp(`^ok   record ids: ${doc.audit_records.length} records and ${doc.sample_inclusion_proofs.length} samples: id = leaf index \\+ 1`, 'm'));
    for (const name of ['verifier key', 'record hashes', 'chain links', 'record ids', 'checkpoint signatures', 'consistency', 'inclusion proofs', 'anchor proofs']) {
      expect(pass.out).toMatch(new RegExp(`^ok   ${name}: `, 'm'));
    }
    expect(pass.out).toMatch(/^verified: tenant /m);
    // the way the README runs it: the bin of the root's devDependency @agw/verifier, from the repository root
    const exportFile = path.join(dir, 'export-root.json');
    fs.writeFileSync(exportFile, JSON.stringify(doc));
    const root = path.resolve(__dirname, '../..');
    for (const [cmd, pre] of [
      ['pnpm', ['exec', 'agw-verify']],
      ['npx', ['--no-install', 'agw-verify']],
    ] as const) {
      const out = execFileSync(cmd, [...pre, exportFile, '--vkey', vkeyFile], { cwd: root, encoding: 'utf8', timeout: 60_000, stdio: ['ignore', 'pipe', 'ignore'] });
      expect(out).toMatch(/^verified: tenant /m);
    }

    const onChain = verifyExportFile(doc, vkeyFile, ['--rpc', `http://127.0.0.1:${8545 + E2E_OFFSET}`]);
    expect(onChain.code).toBe(0);
    expect(onChain.out).toMatch(/^ok   on-chain root: 2 aggregate roots found in contract on chain 31337, written by the 2 anchor transactions the export names$/m);

    const copy = () => JSON.parse(JSON.stringify(doc));

    // the anchor names another checkpoint, or none (a downgrade to the short leaf): the proof no longer reaches the anchored root
    for (const cp of [refs[0].checkpoint_sha256, null]) {
      const other = copy();
      other.anchors.references[1].checkpoint_sha256 = cp;
      const f = verifyExportFile(other, vkeyFile);
      expect(f.code).toBe(1);
      expect(f.out).toMatch(new RegExp(`^verification FAILED at anchor proofs: anchor of tree size ${refs[1].tree_size}: the aggregate proof does not reach`, 'm'));
    }

    // an anchor transaction that did not write this root (another real anchor transaction), with --rpc
    const wrongTx = copy();
    wrongTx.anchors.references[1].tx_hash = refs[0].tx_hash;
    const f5 = verifyExportFile(wrongTx, vkeyFile, ['--rpc', `http://127.0.0.1:${8545 + E2E_OFFSET}`]);
    expect(f5.code).toBe(1);
    expect(f5.out).toMatch(new RegExp(`^verification FAILED at on-chain root: the anchor transaction ${refs[0].tx_hash} of tree size ${refs[1].tree_size} did not anchor root`, 'm'));

    // a root the chain never saw: a self-consistent two-leaf "aggregate" (a made-up sibling) passes offline, the contract does not know it
    const neverAnchored = copy();
    const r1 = neverAnchored.anchors.references[1];
    const size8 = Buffer.alloc(8);
    size8.writeBigUInt64BE(BigInt(r1.tree_size));
    const leaf = Buffer.concat([Buffer.from(t.tenantId.replace(/-/g, ''), 'hex'), size8, Buffer.from(r1.tenant_root, 'hex'), Buffer.from(r1.checkpoint_sha256, 'hex')]);
    const sibling = createHash('sha256').update('a made-up sibling leaf').digest();
    const leafH = createHash('sha256').update(Buffer.concat([Buffer.from([0]), leaf])).digest();
    const madeUpRoot = createHash('sha256').update(Buffer.concat([Buffer.from([1]), leafH, sibling])).digest('hex');
    Object.assign(r1, { leaf_index: 0, leaf_count: 2, aggregate_proof: [sibling.toString('hex')], aggregate_root: madeUpRoot });
    expect(verifyExportFile(neverAnchored, vkeyFile).code).toBe(0);
    const f6 = verifyExportFile(neverAnchored, vkeyFile, ['--rpc', `http://127.0.0.1:${8545 + E2E_OFFSET}`]);
    expect(f6.code).toBe(1);
    expect(f6.out).toMatch(new RegExp(`^verification FAILED at on-chain root: the contract \\S+ has no anchor of root ${r1.aggregate_root}`, 'm'));

    // a flipped byte in a record
    const flipped = copy();
    const victim = flipped.audit_records[1];
    victim.agent_id = victim.agent_id.replace(/.$/, (c: string) => (c === 'x' ? 'y' : 'x'));
    const f1 = verifyExportFile(flipped, vkeyFile);
    expect(f1.code).toBe(1);
    expect(f1.out).toContain(`FAIL record hashes: record ${victim.id} (leaf ${victim.leaf_index}): the hash of its canonical bytes is`);
    expect(f1.out).toMatch(/^verification FAILED at record hashes: /m);

    // a record shown under another id than its leaf's (ids are not hashed: only the record ids check sees it)
    const renumbered = copy();
    renumbered.audit_records[1].id = 4711;
    const f7 = verifyExportFile(renumbered, vkeyFile);
    expect(f7.code).toBe(1);
    expect(f7.out).toMatch(/^ok   record hashes: /m);
    expect(f7.out).toMatch(/^verification FAILED at record ids: record 4711 is leaf 1: its id must be 2 \(leaf index \+ 1\)$/m);

    // an export of format 1.1 (record ids were the fleet's global row keys then) still verifies
    const legacy = copy();
    legacy.package.format_version = '1.1';
    for (const r of legacy.audit_records) r.id += 5000;
    for (const s of legacy.sample_inclusion_proofs) s.record_id += 5000;
    const old = verifyExportFile(legacy, vkeyFile);
    expect(old.code).toBe(0);
    expect(old.out).toMatch(/^ok   record ids: format 1\.1: record ids are global row keys, not tied to leaves/m);

    // a dropped record
    const dropped = copy();
    const gone = dropped.audit_records.splice(2, 1)[0];
    const f2 = verifyExportFile(dropped, vkeyFile);
    expect(f2.code).toBe(1);
    expect(f2.out).toMatch(new RegExp(`^verification FAILED at chain links: record at leaf ${gone.leaf_index} is missing`, 'm'));

    // a forged inclusion proof
    const forged = copy();
    const sample = forged.sample_inclusion_proofs[0];
    sample.proof[0] = createHash('sha256').update('forged').digest('hex');
    const f3 = verifyExportFile(forged, vkeyFile);
    expect(f3.code).toBe(1);
    expect(f3.out).toMatch(new RegExp(`^verification FAILED at inclusion proofs: sample of record ${sample.record_id} \\(leaf ${sample.leaf_index}\\): the inclusion proof does not reach`, 'm'));

    // swapped checkpoints (each still validly signed, but not the head it is listed for)
    const swapped = copy();
    const [c0, c1] = swapped.evidence.checkpoints;
    [c0.note, c1.note] = [c1.note, c0.note];
    const f4 = verifyExportFile(swapped, vkeyFile);
    expect(f4.code).toBe(1);
    expect(f4.out).toMatch(new RegExp(`^verification FAILED at checkpoint signatures: checkpoint listed for tree size ${c0.tree_size} signs size ${c1.tree_size}`, 'm'));

    // a checkpoint whose size was edited: its signature no longer verifies
    const edited = copy();
    edited.evidence.checkpoints[0].note = edited.evidence.checkpoints[0].note.replace(/\n3\n/, '\n4\n');
    expect(verifyExportFile(edited, vkeyFile).out).toMatch(/^verification FAILED at checkpoint signatures: checkpoint of tree size 3: the signature of .* does not verify/m);

    // another tenant's key is not this log's key
    const otherKey = (await api('GET', '/audit/verifier-key', { key: (await newTenant('Evidence third')).apiKey })).body.vkey;
    const otherFile = path.join(dir, 'other.vkey');
    fs.writeFileSync(otherFile, otherKey);
    expect(verifyExportFile(doc, otherFile)).toMatchObject({ code: 1, out: expect.stringContaining('FAIL verifier key: the export names another verifier key') });
  });
});
