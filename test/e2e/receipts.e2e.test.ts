/**
 * Receipts (docs/evidence.md, "Receipts") through the public API and the agw-verify CLI only:
 * - a receipt on every decision at the REST entrance (allow, deny, escalate, and the approved execution of
 *   an escalated call), as a `receipt` field and the `AGW-Receipt` header, and over MCP in
 *   `_meta["io.agw/receipt"]` (allow, deny, escalate);
 * - from receipt to proof: GET /api/audit/proof answers 202 pending before the tree build, then the proof to
 *   the first signed checkpoint; GET /api/audit/receipts/{id} issues a receipt again (another tenant's id: 404);
 * - `agw-verify receipt` passes on a real receipt with its arguments and proof, and names the failure for a
 *   tampered receipt, a tampered argument, a swapped proof and another tenant's key.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { generateKeyPairSync } from 'node:crypto';
import { cosignerVkey } from '@agw/verifier';
import { startFixtures } from '@agw/mcp-fixtures';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type Tenant, api, humanSession, newTenant, toolCall } from './support/api';
import { E2E_BASE_URL, E2E_OFFSET } from './support/e2e-env';

jest.setTimeout(120_000);

const CLI = path.resolve(__dirname, '../../packages/verifier/dist/cli.js');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agw-receipts-'));
const policy = [
  'package agw.custom',
  '',
  'import rego.v1',
  '',
  'deny contains "wiping is not for agents" if input.method == "wipe"',
  '',
  'deny contains "negative sums" if {',
  '  input.method == "add"',
  '  input.params.a < 0',
  '}',
  '',
  'approval contains "deleting needs a human" if input.method == "delete"',
  '',
  'approval contains "large sums need a human" if {',
  '  input.method == "add"',
  '  input.params.a > 1000',
  '}',
  '',
].join('\n');

interface Receipt {
  note: string;
  key: string;
  arguments_salt?: string;
}

function write(name: string, v: unknown): string {
  const f = path.join(dir, name);
  fs.writeFileSync(f, typeof v === 'string' ? v : JSON.stringify(v));
  return f;
}

function cli(args: string[]): { code: number; out: string } {
  try {
    return { code: 0, out: execFileSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 30_000 }) };
  } catch (e) {
    const err = e as { status: number; stdout: string };
    return { code: err.status, out: err.stdout };
  }
}

const line = (r: Receipt, key: string) => new RegExp(`^${key} (.*)$`, 'm').exec(r.note)?.[1];
const recordOf = (r: Receipt) => Number(line(r, 'record'));

let t: Tenant;
let other: Tenant;
let human: string;
let fixtures: Awaited<ReturnType<typeof startFixtures>>;

beforeAll(async () => {
  t = await newTenant('Receipts');
  other = await newTenant('Receipts, another tenant');
  human = await humanSession(t);
  fixtures = await startFixtures({ port: 0, host: '127.0.0.1' });
  expect((await api('POST', '/upstreams', { key: t.apiKey, body: { name: 'fx', url: `${fixtures.url}/mutable/mcp` } })).body.status).toBe('connected');
  expect((await api('PATCH', '/dashboard/settings', { key: t.apiKey, body: { policy_template: 'custom', custom_policy: policy } })).status).toBe(200);
});
afterAll(() => fixtures?.close());

const expectReceipt = (r: Receipt | undefined, decision: string, o: { salted?: boolean } = {}) => {
  expect(r).toMatchObject({ note: expect.stringMatching(/^agw-receipt\/v1\norigin localhost\/agw\//), key: expect.stringMatching(/^agw-receipt-key\/v1\n/) });
  expect(line(r!, 'origin')).toBe(`localhost/agw/${t.tenantId}`);
  expect(line(r!, 'decision')).toBe(decision);
  if (o.salted !== false) {
    expect(Buffer.from(r!.arguments_salt!, 'base64')).toHaveLength(16);
    expect(line(r!, 'arguments')).toMatch(/^[0-9a-f]{64}$/);
  }
  return r!;
};

const args = { q: 'receipts for every call', page: 2 };
const receipts: Record<string, Receipt> = {};

describe('a receipt on every decision at the REST entrance', () => {
  test('allow, deny and escalate: the receipt field and the AGW-Receipt header', async () => {
    const allowed = await api('POST', '/mcp/tools/call', { key: t.apiKey, body: toolCall({ params: args }) });
    expect(allowed.status).toBe(200);
    receipts.allow = expectReceipt(allowed.body.receipt, 'allow');
    expect(Buffer.from(allowed.headers.get('agw-receipt')!, 'base64url').toString('utf8')).toBe(allowed.body.receipt.note);

    const denied = await api('POST', '/mcp/tools/call', { key: t.apiKey, body: toolCall({ method: 'wipe', params: { all: true } }) });
    expect(denied.status).toBe(403);
    expect(denied.body.detail.violations).toEqual(expect.any(Array));
    receipts.deny = expectReceipt(denied.body.receipt, 'deny');
    expect(denied.headers.get('agw-receipt')).toBeTruthy();

    const queued = await api('POST', '/mcp/tools/call', { key: t.apiKey, body: toolCall({ method: 'delete', params: { id: 7 } }) });
    expect(queued.status).toBe(202);
    receipts.escalate = expectReceipt(queued.body.receipt, 'requires_human');
    // each record has its own receipt, each call its own salt
    expect(new Set([receipts.allow, receipts.deny, receipts.escalate].map(recordOf)).size).toBe(3);
    expect(receipts.allow.arguments_salt).not.toBe(receipts.deny.arguments_salt);

    // approved execution: a human approves, the agent runs the exact call
    expect((await api('POST', `/approve/${queued.body.action_id}`, { token: human })).body).toMatchObject({ status: 'approved' });
    const retried = await api('POST', '/mcp/tools/call', { key: t.apiKey, body: toolCall({ method: 'delete', params: { id: 7 }, approved_action_id: queued.body.action_id }) });
    expect(retried.status).toBe(200);
    receipts.approved = expectReceipt(retried.body.receipt, 'allow');
    expect(line(receipts.approved, 'approver')).toBe(t.email);
    // no federated tool: no pinned definition to name
    for (const r of Object.values(receipts)) expect(line(r, 'definition')).toBe('-');
  });
});

describe('a receipt on every decision over MCP', () => {
  test('allow, deny and escalate carry _meta["io.agw/receipt"], naming the pinned definition of the federated tool', async () => {
    const tools = await api('GET', '/upstreams/fx/tools', { key: t.apiKey });
    const pinned = tools.body.tools.find((x: { name: string }) => x.name === 'add').definition_sha256;
    expect(pinned).toMatch(/^[0-9a-f]{64}$/);
    const client = new Client({ name: 'e2e-receipts', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${E2E_BASE_URL}/mcp/server`), { requestInit: { headers: { authorization: `Bearer ${t.apiKey}` } } }));
    try {
      const ok = await client.callTool({ name: 'fx__add', arguments: { a: 1, b: 2 } });
      expect(ok.isError).toBeFalsy();
      expectReceipt(ok._meta?.['io.agw/receipt'] as Receipt, 'allow');
      const no = await client.callTool({ name: 'fx__add', arguments: { a: -1, b: 2 } });
      expect(no.isError).toBe(true);
      expectReceipt(no._meta?.['io.agw/receipt'] as Receipt, 'deny');
      const wait = await client.callTool({ name: 'fx__add', arguments: { a: 5000, b: 1 } });
      expect(wait._meta?.['io.agw/action_id']).toEqual(expect.any(String));
      const r = expectReceipt(wait._meta?.['io.agw/receipt'] as Receipt, 'requires_human');
      expect(line(r, 'tool')).toBe('fx');
      expect(line(r, 'method')).toBe('add');
      for (const x of [ok, no, wait]) expect(line(x._meta?.['io.agw/receipt'] as Receipt, 'definition')).toBe(pinned);
    } finally {
      await client.close();
    }
  });
});

describe('the approved execution over MCP', () => {
  test('the result of a call a human approved carries the receipt of the decision, naming the approver', async () => {
    const V = '2026-07-28';
    const rpc = async (params: Record<string, unknown>) => {
      const r = await api('POST', '/mcp/server', {
        key: t.apiKey,
        headers: { accept: 'application/json, text/event-stream', 'mcp-protocol-version': V, 'mcp-method': 'tools/call', 'mcp-name': 'fx__add' },
        body: {
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'fx__add', ...params, _meta: { 'io.modelcontextprotocol/protocolVersion': V, 'io.modelcontextprotocol/clientInfo': { name: 'e2e-receipts', version: '1.0.0' }, 'io.modelcontextprotocol/clientCapabilities': { elicitation: { url: {} } } } },
        },
      });
      expect(r.status).toBe(200);
      return r.body.result;
    };
    const first = await rpc({ arguments: { a: 8000, b: 1 } });
    expect(first).toMatchObject({ resultType: 'input_required', requestState: expect.any(String) });
    expectReceipt(first._meta['io.agw/receipt'], 'requires_human');
    expect((await api('POST', `/approve/${first._meta['io.agw/action_id']}`, { token: human })).body).toMatchObject({ status: 'approved' });
    const done = await rpc({ arguments: { a: 8000, b: 1 }, requestState: first.requestState, inputResponses: { agw_approval: { action: 'accept' } } });
    expect(done).toMatchObject({ resultType: 'complete', content: [{ type: 'text', text: '8001' }] });
    const r = expectReceipt(done._meta['io.agw/receipt'], 'allow', { salted: false });
    expect(line(r, 'approver')).toBe(t.email);
    expect(line(r, 'policy')).toBe('human-approval');
    expect(line(r, 'definition')).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('from receipt to proof, and agw-verify receipt', () => {
  let vkeyFile: string;

  test('the proof is pending before the tree build, then leads to the first signed checkpoint', async () => {
    const id = recordOf(receipts.allow);
    const pending = await api('GET', `/audit/proof?record_id=${id}`, { key: t.apiKey });
    expect(pending.status).toBe(202);
    expect(pending.body).toMatchObject({ status: 'pending', record_id: id, leaf_index: id - 1, merge_by: expect.any(String), max_merge_delay_seconds: expect.any(Number) });

    expect((await api('POST', '/anchor/trigger', { key: t.apiKey })).body).toMatchObject({ status: 'anchored' });
    const byId = await api('GET', `/audit/proof?record_id=${id}`, { key: t.apiKey });
    expect(byId.status).toBe(200);
    expect(byId.body).toMatchObject({ status: 'merged', record_id: id, checkpoint: expect.stringContaining(`localhost/agw/${t.tenantId}\n`) });
    const byReceipt = await api('GET', `/audit/proof?receipt=${Buffer.from(receipts.allow.note).toString('base64url')}`, { key: t.apiKey });
    expect(byReceipt.body).toEqual(byId.body);
    expect((await api('GET', '/audit/proof', { key: t.apiKey })).status).toBe(422);
    expect((await api('GET', '/audit/proof?receipt=bm90IGEgcmVjZWlwdA', { key: t.apiKey })).status).toBe(422);

    // issued again from the stored record; another tenant's id is not found
    const again = await api('GET', `/audit/receipts/${id}`, { key: t.apiKey });
    expect(again.status).toBe(200);
    expect(line(again.body, 'leaf')).toBe(line(receipts.allow, 'leaf'));
    expect(line(again.body, 'arguments')).toBe(line(receipts.allow, 'arguments'));
    expect((await api('GET', `/audit/receipts/${id}`, { key: other.apiKey })).status).toBe(404);
    expect((await api('GET', '/audit/receipts/0', { key: t.apiKey })).status).toBe(422);

    vkeyFile = write('vkey', (await api('GET', '/audit/verifier-key', { key: t.apiKey })).body.vkey);
    write('proof.json', byId.body);
  });

  test('agw-verify receipt passes on the real receipt with its arguments and proof', () => {
    const r = cli(['receipt', write('receipt.json', receipts.allow), '--vkey', vkeyFile, '--arguments', write('args.json', { page: 2, q: 'receipts for every call' }), '--proof', path.join(dir, 'proof.json')]);
    expect(r.out).toMatch(/^ok   delegation: /m);
    expect(r.out).toMatch(/^ok   receipt signature: /m);
    expect(r.out).toMatch(/^ok   window: /m);
    expect(r.out).toMatch(/^ok   arguments: /m);
    expect(r.out).toMatch(/^ok   checkpoint signature: /m);
    expect(r.out).toMatch(/^ok   inclusion proof: /m);
    expect(r.out).toMatch(/^verified: receipt of record \d+/m);
    expect(r.code).toBe(0);
    // the REST answer itself is a receipt file too
    expect(cli(['receipt', write('answer.json', { status: 'allowed', receipt: receipts.deny }), '--vkey', vkeyFile]).code).toBe(0);
  });

  test('agw-verify receipt names the failure: tampered receipt, tampered argument, swapped proof, wrong key', async () => {
    const proof = path.join(dir, 'proof.json');
    const tampered = cli(['receipt', write('t1.json', { ...receipts.allow, note: receipts.allow.note.replace('decision allow', 'decision deny') }), '--vkey', vkeyFile]);
    expect(tampered.code).toBe(1);
    expect(tampered.out).toMatch(/^verification FAILED at receipt signature: /m);

    const arg = cli(['receipt', path.join(dir, 'receipt.json'), '--vkey', vkeyFile, '--arguments', write('a2.json', { ...args, page: 3 })]);
    expect(arg.code).toBe(1);
    expect(arg.out).toMatch(/^verification FAILED at arguments: /m);

    const swapped = cli(['receipt', write('deny.json', receipts.deny), '--vkey', vkeyFile, '--proof', proof]);
    expect(swapped.code).toBe(1);
    expect(swapped.out).toMatch(/^verification FAILED at inclusion proof: the proof is for record/m);

    const otherKey = write('vkey-other', (await api('GET', '/audit/verifier-key', { key: other.apiKey })).body.vkey);
    const wrong = cli(['receipt', path.join(dir, 'receipt.json'), '--vkey', otherKey]);
    expect(wrong.code).toBe(1);
    expect(wrong.out).toMatch(/^verification FAILED at delegation: /m);
  });

  test('agw-verify receipt applies a witness policy to the proof\'s checkpoint: the fleet witness 1 of 1 passes, 2 of 2 fails naming the missing witness', async () => {
    const witnessVkey = (await (await fetch(`http://127.0.0.1:${7380 + E2E_OFFSET}/`)).text()).trim();
    const proof = JSON.parse(fs.readFileSync(path.join(dir, 'proof.json'), 'utf8')) as { checkpoint: string };
    // the proof's checkpoint carries the fleet witness's cosignature line after the log's signature
    expect(proof.checkpoint).toContain(`\u2014 ${witnessVkey.split('+')[0]} `);
    const args = ['receipt', path.join(dir, 'receipt.json'), '--vkey', vkeyFile, '--proof', path.join(dir, 'proof.json'), '--witness', witnessVkey];
    const one = cli(args);
    expect(one.code).toBe(0);
    expect(one.out).toMatch(/^ok   witnesses: 1 of 1 witnesses cosigned the proof's checkpoint/m);
    const other = cosignerVkey('other.example/witness', generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' }).subarray(12));
    const two = cli([...args, '--witness', other, '--witness-quorum', '2']);
    expect(two.code).toBe(1);
    expect(two.out).toMatch(/^verification FAILED at witnesses: only 1 of the 2 cosignatures the policy needs on the proof's checkpoint; missing: other\.example\/witness$/m);
  });
});
