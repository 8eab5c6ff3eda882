/**
 * Witnesses through the running fleet: the fleet's local agw-witness (scripts/fleet.mjs, C2SP tlog-witness)
 * cosigns each tenant's checkpoints as they are signed; the API serves the cosigned checkpoint (JSON and
 * ?format=note), the witness serves it to monitors, and agw-verify checks a real compliance export against
 * the witness policy: "1 of 1" passes, "2 of 2" with a second witness that never cosigned fails by name, and
 * a cosignature line altered in the export fails as invalid.
 */
import { createHash, generateKeyPairSync } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cosignatureTime, cosignerVkey, parseCosignerKey } from '@agw/verifier';
import { type Tenant, api, call, newTenant } from './support/api';
import { E2E_OFFSET } from './support/e2e-env';

const CLI = path.resolve(__dirname, '../../packages/verifier/dist/cli.js');
const WITNESS = `http://127.0.0.1:${7380 + E2E_OFFSET}`;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agw-witness-e2e-'));

function verify(args: string[]): { code: number; out: string } {
  try {
    return { code: 0, out: execFileSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 30_000 }) };
  } catch (e) {
    const err = e as { status: number; stdout: string };
    return { code: err.status, out: err.stdout };
  }
}

describe('witnesses: the fleet witness cosigns every checkpoint', () => {
  let t: Tenant;
  let witnessVkey: string;

  beforeAll(async () => {
    t = await newTenant('Witnessed');
    witnessVkey = (await (await fetch(`${WITNESS}/`)).text()).trim();
  });

  it('the latest checkpoint is cosigned by the fleet witness, in the API and at the witness', async () => {
    for (let i = 0; i < 3; i++) await call(t.apiKey, { params: { q: `witnessed ${i}` } });
    expect((await api('POST', '/anchor/trigger', { key: t.apiKey })).status).toBeLessThan(300);
    const cp = await api('GET', '/audit/checkpoints/latest', { key: t.apiKey });
    expect(cp.status).toBe(200);
    const key = parseCosignerKey(witnessVkey);
    expect(cp.body.cosignatures).toEqual([{ witness: key.name, cosigned_at: expect.any(String) }]);
    expect(cp.body.cosigned_checkpoint.startsWith(cp.body.checkpoint)).toBe(true);
    const time = cosignatureTime(cp.body.cosigned_checkpoint, key);
    expect(Number(time)).toBeGreaterThan(Date.now() / 1000 - 600);
    const note = await api('GET', '/audit/checkpoints/latest?format=note', { key: t.apiKey });
    expect(note.body).toBe(cp.body.cosigned_checkpoint);
    // the monitoring endpoint of the witness: the same checkpoint with both signatures
    const origin = cp.body.origin as string;
    const atWitness = await (await fetch(`${WITNESS}/${createHash('sha256').update(origin).digest('hex')}/checkpoint`)).text();
    expect(atWitness).toBe(cp.body.cosigned_checkpoint);
  });

  it('agw-verify applies a witness policy to the export: 1 of 1 passes, 2 of 2 fails naming the missing witness, a bad cosignature fails', async () => {
    for (let i = 0; i < 2; i++) await call(t.apiKey, { params: { q: `witnessed more ${i}` } });
    expect((await api('POST', '/anchor/trigger', { key: t.apiKey })).status).toBeLessThan(300);
    const exp = await api('GET', `/compliance/export/${t.tenantId}?format=json`, { key: t.apiKey });
    const vkey = (await api('GET', '/audit/verifier-key', { key: t.apiKey })).body.vkey as string;
    const file = path.join(dir, 'export.json');
    fs.writeFileSync(file, JSON.stringify(exp.body));
    const one = verify([file, '--vkey', vkey, '--witness', witnessVkey]);
    expect(one.code).toBe(0);
    expect(one.out).toMatch(/^ok {3}witnesses: 1 of 1 witnesses cosigned the latest checkpoint \(size \d+; policy 1 of 1\): localhost\/agw-witness-\d+ at /m);

    const other = cosignerVkey('other.example/witness', generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' }).subarray(12));
    const two = verify([file, '--vkey', vkey, '--witness', witnessVkey, '--witness', other, '--witness-quorum', '2']);
    expect(two.code).toBe(1);
    expect(two.out).toMatch(/^FAIL witnesses: only 1 of the 2 cosignatures the policy needs on the latest checkpoint \(size \d+\); missing: other\.example\/witness$/m);
    expect(verify([file, '--vkey', vkey, '--witness', witnessVkey, '--witness', other, '--witness-quorum', '1']).code).toBe(0);

    const doc = JSON.parse(JSON.stringify(exp.body));
    const latest = doc.evidence.checkpoints[doc.evidence.checkpoints.length - 1];
    const line = latest.cosigned_note.slice(latest.note.length);
    const sig = Buffer.from(line.trim().split(' ')[2], 'base64');
    sig[40] ^= 1;
    latest.cosigned_note = `${latest.note}${line.trim().split(' ').slice(0, 2).join(' ')} ${sig.toString('base64')}\n`;
    fs.writeFileSync(file, JSON.stringify(doc));
    const bad = verify([file, '--vkey', vkey, '--witness', witnessVkey]);
    expect(bad.code).toBe(1);
    expect(bad.out).toMatch(/^FAIL witnesses: a cosignature of the latest checkpoint \(size \d+\) is invalid: the cosignature of localhost\/agw-witness-\d+ does not verify$/m);
  });
});
