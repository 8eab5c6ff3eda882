/**
 * The evidence signing key is created once, even when several vault replicas sign their first checkpoint
 * at the same moment: three separate processes (each its own PKCS#11 session on the real SoftHSM2 token,
 * as replicas have) ask for the key of a fresh label at one instant; the token then holds exactly one
 * Ed25519 key pair under it and every process publishes the same public key. The replicas serialize the
 * find-or-create with a Postgres advisory lock (KeyRepository.withLabelLock), as vault.service.ts wires it.
 * Runs the built code (dist) in the children, like the service.
 */
import { execFile } from 'node:child_process';
import { createPublicKey, randomUUID, verify } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TEST_DATABASE_URL } from '@agw/shared';
import * as pkcs11js from 'pkcs11js';
import { createHsm } from '../src/hsm/create-hsm';
import type { HsmBackend } from '../src/hsm/hsm-backend';
import { testConfig, withTestToken } from './helpers';

jest.setTimeout(60_000);

const dist = path.resolve(__dirname, '../dist');
const child = (label: string, tenant: string) => `
const { createDb, migrateToLatest } = require(require.resolve('@agw/shared', { paths: [${JSON.stringify(dist)}] }));
const { createHsm } = require(${JSON.stringify(path.join(dist, 'hsm/create-hsm.js'))});
const { loadVaultConfig } = require(${JSON.stringify(path.join(dist, 'config.js'))});
const { NoteSigner } = require(${JSON.stringify(path.join(dist, 'signing/note-signer.js'))});
const { KeyRepository } = require(${JSON.stringify(path.join(dist, 'keys/key.repository.js'))});
(async () => {
  const config = loadVaultConfig({ ...process.env, PKCS11_TOKEN_LABEL: 'agw-test', VAULT_HSM_BACKEND: 'pkcs11', AGW_PROFILE: 'local', LOG_LEVEL: 'silent' });
  const db = createDb(process.env.DATABASE_URL, { max: 2 });
  const hsm = createHsm(config);
  const keys = new KeyRepository(db);
  const signer = new NoteSigner(hsm, 'race.example.test', { label: ${JSON.stringify(label)}, lock: (fn) => keys.withLabelLock('00000000-0000-0000-0000-000000000000', ${JSON.stringify(label)}, () => fn()) });
  await db.selectNoFrom((eb) => eb.val(1).as('one')).execute(); // connected before the start
  const start = Number(process.argv[1]);
  while (Date.now() < start) await new Promise((r) => setTimeout(r, 1));
  const info = await signer.keyInfo(${JSON.stringify(tenant)});
  process.stdout.write(JSON.stringify({ vkey: info.vkey }));
  await hsm.close();
  await db.destroy();
})().catch((e) => { console.error(e); process.exit(1); });
`;

let hsm: HsmBackend;
const label = `agw:test:evidence-race:${randomUUID()}`;

beforeAll(() => {
  hsm = createHsm(testConfig());
});
afterAll(async () => {
  await hsm.destroyKey(label);
  await hsm.close();
});

function countObjects(lbl: string): { privateKeys: number; publicKeys: number } {
  return withTestToken((p11, s) => {
    const count = (cls: number) => {
      p11.C_FindObjectsInit(s, [
        { type: pkcs11js.CKA_CLASS, value: cls },
        { type: pkcs11js.CKA_LABEL, value: lbl },
      ]);
      const found = p11.C_FindObjects(s, 10);
      p11.C_FindObjectsFinal(s);
      return found.length;
    };
    return { privateKeys: count(pkcs11js.CKO_PRIVATE_KEY), publicKeys: count(pkcs11js.CKO_PUBLIC_KEY) };
  });
}

it('three replicas signing their first checkpoint at once create one key pair and publish one key', async () => {
  expect(fs.existsSync(path.join(dist, 'signing/note-signer.js'))).toBe(true); // built (turbo build)
  const script = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'agw-race-')), 'replica.js');
  fs.writeFileSync(script, child(label, randomUUID()));
  const start = Date.now() + 3000;
  const outs = await Promise.all(
    [0, 1, 2].map(
      () =>
        new Promise<string>((resolve, reject) =>
          execFile(process.execPath, [script, String(start)], { env: { ...process.env, DATABASE_URL: TEST_DATABASE_URL }, timeout: 30_000 }, (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout))),
        ),
    ),
  );
  const vkeys = outs.map((o) => JSON.parse(o).vkey as string);
  expect(new Set(vkeys).size).toBe(1);
  expect(countObjects(label)).toEqual({ privateKeys: 1, publicKeys: 1 });
});

/** A key pair generated straight on the token, as another deployment sharing it (without our lock) would. */
function generatePairDirectly(lbl: string): void {
  withTestToken(
    (p11, s) => {
      try {
        p11.C_Login(s, pkcs11js.CKU_USER, testConfig().pkcs11Pin);
      } catch {
        /* already logged in through the backend's session */
      }
      const common = [
        { type: pkcs11js.CKA_TOKEN, value: true },
        { type: pkcs11js.CKA_LABEL, value: lbl },
        { type: pkcs11js.CKA_KEY_TYPE, value: 0x40 /* CKK_EC_EDWARDS */ },
      ];
      p11.C_GenerateKeyPair(
        s,
        { mechanism: 0x1055 /* CKM_EC_EDWARDS_KEY_PAIR_GEN */ },
        [...common, { type: pkcs11js.CKA_VERIFY, value: true }, { type: pkcs11js.CKA_EC_PARAMS, value: Buffer.from('06032b6570', 'hex') }],
        [...common, { type: pkcs11js.CKA_PRIVATE, value: true }, { type: pkcs11js.CKA_SIGN, value: true }, { type: pkcs11js.CKA_SENSITIVE, value: true }],
      );
    },
    { write: true },
  );
}

const signingChild = (lbl: string) => `
const { createHsm } = require(${JSON.stringify(path.join(dist, 'hsm/create-hsm.js'))});
const { loadVaultConfig } = require(${JSON.stringify(path.join(dist, 'config.js'))});
(async () => {
  const config = loadVaultConfig({ ...process.env, PKCS11_TOKEN_LABEL: 'agw-test', VAULT_HSM_BACKEND: 'pkcs11', AGW_PROFILE: 'local', LOG_LEVEL: 'silent' });
  const hsm = createHsm(config);
  const { publicKey } = await hsm.ensureEd25519Key(${JSON.stringify(lbl)});
  const signature = await hsm.signEd25519(${JSON.stringify(lbl)}, Buffer.from('checkpoint text\\n'));
  process.stdout.write(JSON.stringify({ publicKey: publicKey.toString('hex'), signature: signature.toString('hex') }));
  await hsm.close();
})().catch((e) => { console.error(e); process.exit(1); });
`;

it('with two key pairs under the label (a token shared without a lock), every process publishes the same key and signs with its private key', async () => {
  const shared = `agw:test:evidence-shared:${randomUUID()}`;
  try {
    generatePairDirectly(shared);
    generatePairDirectly(shared);
    expect(countObjects(shared)).toEqual({ privateKeys: 2, publicKeys: 2 });
    const script = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'agw-shared-')), 'signer.js');
    fs.writeFileSync(script, signingChild(shared));
    const outs = await Promise.all(
      [0, 1, 2].map(
        () =>
          new Promise<{ publicKey: string; signature: string }>((resolve, reject) =>
            execFile(process.execPath, [script], { env: { ...process.env }, timeout: 30_000 }, (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(JSON.parse(stdout)))),
          ),
      ),
    );
    expect(new Set(outs.map((o) => o.publicKey)).size).toBe(1);
    for (const o of outs) {
      const key = createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), Buffer.from(o.publicKey, 'hex')]), format: 'der', type: 'spki' });
      expect(verify(null, Buffer.from('checkpoint text\n'), key, Buffer.from(o.signature, 'hex'))).toBe(true);
    }
  } finally {
    await hsm.destroyKey(shared);
  }
});
