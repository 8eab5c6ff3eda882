/**
 * Checkpoints signed with a Vault Transit `ed25519` key (VAULT_HSM_BACKEND=transit). No Vault server can
 * run on this machine, so a double speaks Vault's HTTP API (the documented request and response shapes of
 * `transit/keys/:name` and `transit/sign/:name`) on a real socket, holding the private key as Transit does;
 * the real node-vault client and VaultTransitHsm talk to it. The note is verified with the published
 * verifier key only. Against a real Vault: the contract test (test/vault-transit.contract.test.ts, VAULT_ADDR).
 */
import crypto, { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { VaultTransitHsm } from '../src/hsm/vault-transit-hsm';
import { NoteSigner } from '../src/signing/note-signer';

const TOKEN = 'test-vault-token';
const keys = new Map<string, crypto.KeyObject>();
const requests: Array<{ method: string; url: string; body: Record<string, unknown> }> = [];
let server: http.Server;
let endpoint: string;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const body = raw ? JSON.parse(raw) : {};
      requests.push({ method: req.method!, url: req.url!, body });
      const send = (status: number, json?: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(json === undefined ? '' : JSON.stringify(json));
      if (req.headers['x-vault-token'] !== TOKEN) return send(403, { errors: ['permission denied'] });
      const m = /^\/v1\/transit\/(keys|sign)\/([A-Za-z0-9_.-]+)$/.exec(req.url ?? '');
      if (!m) return send(404, { errors: [] });
      const [, op, name] = m;
      if (op === 'keys' && req.method === 'GET') {
        const k = keys.get(name);
        if (!k) return send(404, { errors: [] });
        const pub = crypto.createPublicKey(k).export({ format: 'der', type: 'spki' }).subarray(12);
        return send(200, { data: { name, type: 'ed25519', exportable: false, latest_version: 1, keys: { '1': { creation_time: new Date().toISOString(), name: 'ed25519', public_key: pub.toString('base64') } } } });
      }
      if (op === 'keys' && (req.method === 'POST' || req.method === 'PUT')) {
        if (body.type !== 'ed25519') return send(400, { errors: ['this double creates ed25519 keys only'] });
        if (!keys.has(name)) keys.set(name, crypto.generateKeyPairSync('ed25519').privateKey);
        return send(204);
      }
      if (op === 'sign' && (req.method === 'POST' || req.method === 'PUT')) {
        const k = keys.get(name);
        if (!k) return send(400, { errors: [`signing key not found`] });
        const sig = crypto.sign(null, Buffer.from(String(body.input), 'base64'), k);
        return send(200, { data: { signature: `vault:v1:${sig.toString('base64')}`, key_version: 1 } });
      }
      return send(405, { errors: [] });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
});

/** Verify a C2SP signed note with a vkey only (name+keyhash+base64(0x01||key)). */
function verifyNote(note: string, vkey: string): string {
  const [name, idHex] = vkey.split('+');
  const data = Buffer.from(vkey.slice(vkey.indexOf('+', vkey.indexOf('+') + 1) + 1), 'base64');
  expect(data[0]).toBe(0x01);
  const pub = data.subarray(1);
  const id = crypto.createHash('sha256').update(Buffer.concat([Buffer.from(name), Buffer.from([0x0a, 0x01]), pub])).digest().subarray(0, 4);
  expect(id.toString('hex')).toBe(idHex);
  const split = note.lastIndexOf('\n\n');
  const text = note.slice(0, split + 1);
  const m = /^\u2014 (\S+) (\S+)\n$/.exec(note.slice(split + 2))!;
  expect(m[1]).toBe(name);
  const raw = Buffer.from(m[2], 'base64');
  expect(raw.subarray(0, 4).equals(id)).toBe(true);
  const spki = crypto.createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), pub]), format: 'der', type: 'spki' });
  if (!crypto.verify(null, Buffer.from(text, 'utf8'), spki, raw.subarray(4))) throw new Error('signature does not verify');
  return text;
}

it('creates one non-exportable Transit ed25519 key and signs checkpoints that verify with the published key', async () => {
  const label = `agw:evidence:ed25519:${randomUUID()}`;
  const signer = new NoteSigner(new VaultTransitHsm({ endpoint, token: TOKEN, mount: 'transit' }), 'transit.example.test', { label });
  const tenant = randomUUID();
  const [a, b] = await Promise.all([signer.keyInfo(tenant), signer.keyInfo(tenant)]);
  expect(a.vkey).toBe(b.vkey);
  expect(a.custody).toBe('transit:Ed25519 (backend signing)');
  const transitName = label.replace(/[^A-Za-z0-9_.-]/g, '_');
  const creates = requests.filter((r) => r.url === `/v1/transit/keys/${transitName}` && r.method !== 'GET');
  expect(creates.map((r) => r.body)).toEqual([{ type: 'ed25519', exportable: false }]);

  const root = crypto.createHash('sha256').update('transit tree').digest().toString('base64');
  const text = `transit.example.test/agw/${tenant}\n7\n${root}\n`;
  const { note } = await signer.sign(tenant, text);
  expect(verifyNote(note, a.vkey)).toBe(text);
  const signReq = requests.find((r) => r.url === `/v1/transit/sign/${transitName}`)!;
  expect(Buffer.from(String(signReq.body.input), 'base64').toString('utf8')).toBe(text); // the note text itself, not a hash
  expect(() => verifyNote(note.replace('\n7\n', '\n8\n'), a.vkey)).toThrow('signature does not verify');

  // another process of the vault finds the same key (no second key is created)
  const again = new NoteSigner(new VaultTransitHsm({ endpoint, token: TOKEN, mount: 'transit' }), 'transit.example.test', { label });
  expect((await again.keyInfo(tenant)).vkey).toBe(a.vkey);
  expect(requests.filter((r) => r.url === `/v1/transit/keys/${transitName}` && r.method !== 'GET')).toHaveLength(1);
});

it('a token Vault refuses is a dependency error (the endpoints answer 503), not a crash', async () => {
  const label = `agw:evidence:other:${randomUUID()}`;
  const hsm = new VaultTransitHsm({ endpoint, token: 'wrong-token', mount: 'transit' });
  await expect(new NoteSigner(hsm, 'transit.example.test', { label }).keyInfo(randomUUID())).rejects.toMatchObject({ code: 'dependency_unavailable' });
});
