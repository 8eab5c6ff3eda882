/**
 * Egress exceptions are granted per tenant (UPSTREAM_ALLOW_CIDRS_BY_TENANT, docs/federation.md "Egress"):
 * with the production rule (no fleet-wide range, no private brokered upstreams) a range granted to tenant A
 * opens it to A's federated upstreams and A's brokered credentials, and never to tenant B. The vault's own
 * definition started in-process with that rule (test/support/start-vault.ts), against the real Postgres, the
 * SoftHSM2 token, the project's hostile MCP upstream and an HTTP API on loopback.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { type HostileUpstream, startHostileUpstream } from '@agw/mcp-fixtures';
import { ConfigError } from '@agw/shared';
import { TargetGuard } from '../src/broker/target-guard';
import { loadVaultConfig } from '../src/config';
import { CredentialRepository } from '../src/credentials/credential.repository';
import { CredentialStore } from '../src/credentials/credential-store';
import { type StartedVault, startVault } from './support/start-vault';

jest.setTimeout(60_000);

const A = randomUUID();
const B = randomUUID();
const granted = new Map([[A, ['127.0.0.0/8']]]);

let vault: StartedVault;
let upstream: HostileUpstream;
let api: http.Server;
let apiUrl: string;

beforeAll(async () => {
  // the production rule: no range open to every tenant, no private brokered upstreams, one range granted to A
  // (an empty UPSTREAM_ALLOW_CIDRS reads as unset, which is loopback in the local profile: given as config)
  vault = await startVault({ env: { VAULT_ALLOW_PRIVATE_UPSTREAMS: 'false', UPSTREAM_ALLOW_CIDRS_BY_TENANT: `${A}=127.0.0.0/8` }, config: { upstreamAllowCidrs: [] } });
  upstream = await startHostileUpstream({ host: '127.0.0.1', config: { tools: [{ kind: 'plain', name: 'ping', description: 'Answers pong.' }] } });
  api = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'));
  });
  await new Promise<void>((r) => api.listen(0, '127.0.0.1', r));
  apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  await vault?.close();
  await upstream?.close();
  await new Promise((r) => api?.close(r));
});

test('the vault started with the grant it was given', () => {
  expect(vault.config).toMatchObject({ upstreamAllowCidrs: [], allowPrivateUpstreams: false, upstreamAllowCidrsByTenant: granted });
});

describe('federated upstreams', () => {
  test("A's grant lets A register and call an upstream in the range", async () => {
    const view = await vault.api.federation.register(A, { name: 'internal', url: upstream.mcpUrl });
    expect(view).toMatchObject({ status: 'connected', status_reason: null });
    const target = await vault.api.federation.lookup(A, 'internal', 'ping');
    const call = await vault.api.federation.call(A, target!, {});
    expect(call.outcome).toBe('executed');
  });

  test('B registering the same upstream is refused: the range is not open to it', async () => {
    await expect(vault.api.federation.register(B, { name: 'internal', url: upstream.mcpUrl })).rejects.toMatchObject({
      detail: [expect.objectContaining({ loc: ['url'], msg: expect.stringMatching(/127\.0\.0\.1 is loopback.*UPSTREAM_ALLOW_CIDRS_BY_TENANT/) })],
    });
    expect(await vault.api.federation.federatedTools(B)).toEqual([]);
  });
});

describe('brokered credentials', () => {
  test("A's credential reaches an API in its range; B can neither register one nor reach it", async () => {
    const { credentials, broker } = vault.api;
    await credentials.register(A, { tool_id: 'svc_internal', name: 'main', value: 'sk-a', credential_type: 'bearer', upstream_url: apiUrl });
    const out = await broker.execute(A, { actionId: randomUUID(), agentId: 'a', tool: 'svc_internal', method: 'get', params: {}, origin: 'tool_call' });
    expect(out).toMatchObject({ statusCode: 200, outcome: 'executed' });
    await expect(credentials.register(B, { tool_id: 'svc_internal', name: 'main', value: 'sk-b', credential_type: 'bearer', upstream_url: apiUrl })).rejects.toMatchObject({
      detail: [expect.objectContaining({ loc: ['upstream_url'], msg: expect.stringMatching(/127\.0\.0\.1 is not public/) })],
    });
    // a credential B registered while its name resolved elsewhere is checked again, for B, before every call
    const lenient = new CredentialStore(vault.api.keyring, new CredentialRepository(vault.api.db), new TargetGuard({ allowPrivate: true, requireHttps: false }));
    await lenient.register(B, { tool_id: 'svc_internal', name: 'main', value: 'sk-b', credential_type: 'bearer', upstream_url: apiUrl });
    const refused = await broker.execute(B, { actionId: randomUUID(), agentId: 'b', tool: 'svc_internal', method: 'get', params: {}, origin: 'tool_call' });
    expect(refused).toMatchObject({ statusCode: 502, outcome: 'blocked' });
  });
});

describe('the settings', () => {
  const production = { AGW_PROFILE: 'production', PKCS11_PIN: 'a-real-pin-1234', LOG_LEVEL: 'silent' };

  test('UPSTREAM_ALLOW_CIDRS_BY_TENANT is parsed and validated at start', () => {
    expect(loadVaultConfig({ ...production, UPSTREAM_ALLOW_CIDRS_BY_TENANT: `${A}=10.20.0.0/16,fd00:20::/48` }).upstreamAllowCidrsByTenant).toEqual(new Map([[A, ['10.20.0.0/16', 'fd00:20::/48']]]));
    expect(loadVaultConfig(production).upstreamAllowCidrsByTenant).toBeUndefined();
    expect(() => loadVaultConfig({ ...production, UPSTREAM_ALLOW_CIDRS_BY_TENANT: 'acme=10.0.0.0/8' })).toThrow(/UPSTREAM_ALLOW_CIDRS_BY_TENANT: "acme" is not a tenant id/);
  });

  test('the fleet-wide forms are refused in production and kept in the local profile', () => {
    expect(() => loadVaultConfig({ ...production, UPSTREAM_ALLOW_CIDRS: '10.0.0.0/8' })).toThrow(ConfigError);
    expect(() => loadVaultConfig({ ...production, UPSTREAM_ALLOW_CIDRS: '10.0.0.0/8' })).toThrow(/UPSTREAM_ALLOW_CIDRS: opens a range to every tenant/);
    expect(() => loadVaultConfig({ ...production, VAULT_ALLOW_PRIVATE_UPSTREAMS: 'true' })).toThrow(/VAULT_ALLOW_PRIVATE_UPSTREAMS: opens every address to every tenant/);
    expect(loadVaultConfig(production)).toMatchObject({ upstreamAllowCidrs: [], allowPrivateUpstreams: false });
    expect(loadVaultConfig({ LOG_LEVEL: 'silent' })).toMatchObject({ upstreamAllowCidrs: ['127.0.0.0/8', '::1/128'], allowPrivateUpstreams: true });
    expect(loadVaultConfig({ LOG_LEVEL: 'silent', UPSTREAM_ALLOW_CIDRS: '10.0.0.0/8' })).toMatchObject({ upstreamAllowCidrs: ['10.0.0.0/8'] });
  });
});
