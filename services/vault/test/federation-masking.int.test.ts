/**
 * The credential never reaches the agent through a federated upstream (docs/federation.md, "Secrets never
 * reach the agent") of the vault (its own definition started in-process, test/support/start-vault.ts),
 * against the real Postgres, the SoftHSM2 token and the project's hostile upstream over real HTTP: it echoes
 * the headers of every request it receives, in every spelling, in results, tool errors, JSON-RPC errors and
 * HTTP 502 bodies. Each credential type, on the first call of a connection and
 * on later ones (the review's finding 2: a reused connection masked nothing), and in the status reason.
 */
import { randomUUID } from 'node:crypto';
import { type HostileUpstream, type ToolSpec, startHostileUpstream } from '@agw/mcp-fixtures';
import type { Federation } from '../src/federation/federation';
import type { CredentialInput } from '../src/federation/upstream-credentials';
import { type StartedVault, startVault } from './support/start-vault';

jest.setTimeout(60_000);

const BEARER = 'bearer-SECRET-7f3a9c2e1d';
const HEADER = 'header-SECRET-4b8e6a0f2c';
const CLIENT = { id: 'mask-client', secret: 'client-SECRET-9d1c7e5b3a' };

let vault: StartedVault;
let federation: Federation;
const upstreams: HostileUpstream[] = [];

beforeAll(async () => {
  vault = await startVault({ env: { FEDERATION_SYNC_BURST: '100', FEDERATION_SYNC_INTERVAL_MS: '10' } });
  federation = vault.api.federation;
});

afterAll(async () => {
  await vault?.close();
  await Promise.all(upstreams.map((u) => u.close()));
});

const tools: ToolSpec[] = [{ kind: 'echo_headers' }, { kind: 'plain', name: 'ping' }];

/** The credential of each type, the upstream that asks for it, and every secret a request to it carries. */
async function upstreamFor(type: 'bearer' | 'header' | 'oauth_client_credentials'): Promise<{ up: HostileUpstream; credential: CredentialInput; secrets: () => string[] }> {
  if (type === 'bearer') {
    const up = await startHostileUpstream({ auth: { bearer: BEARER }, config: { tools } });
    return { up, credential: { type, value: BEARER }, secrets: () => [BEARER] };
  }
  if (type === 'header') {
    const up = await startHostileUpstream({ auth: { header: { name: 'x-upstream-key', value: HEADER } }, config: { tools } });
    return { up, credential: { type, header_name: 'X-Upstream-Key', value: HEADER }, secrets: () => [HEADER] };
  }
  const up = await startHostileUpstream({ auth: { oauth: true }, oauthClient: CLIENT, config: { tools } });
  // the access tokens the upstream issued: each is a secret too
  return { up, credential: { type, token_url: up.tokenUrl, client_id: CLIENT.id, client_secret: CLIENT.secret }, secrets: () => [CLIENT.secret, ...up.tokens()] };
}

/** Every secret, in none of its spellings, anywhere in `value`'s JSON. */
function expectNoSecret(value: unknown, secrets: string[]): void {
  const text = JSON.stringify(value);
  for (const s of secrets) {
    const b64 = Buffer.from(s).toString('base64').replace(/=+$/, '');
    for (const form of [s, b64.slice(4, -4), encodeURIComponent(s), [...s].map((c) => `\\\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')]) {
      expect(text).not.toContain(form);
    }
  }
}

describe.each(['bearer', 'header', 'oauth_client_credentials'] as const)('a %s credential echoed by the upstream', (type) => {
  const tenant = randomUUID();
  let u: Awaited<ReturnType<typeof upstreamFor>>;

  beforeAll(async () => {
    u = await upstreamFor(type);
    upstreams.push(u.up);
    const view = await federation.register(tenant, { name: 'echo', url: u.up.mcpUrl, credential: u.credential });
    expect(view).toMatchObject({ status: 'connected' });
    expect(view.tools!.map((t) => t.name)).toContain('echo_headers');
  });

  const call = async (args: Record<string, unknown>) => federation.call(tenant, (await federation.lookup(tenant, 'echo', 'echo_headers'))!, args);

  test('results are masked on the first call of the connection and on every later one', async () => {
    for (let i = 0; i < 3; i++) {
      const r = await call({ mode: 'result' });
      expect(r.outcome).toBe('executed');
      expect(JSON.stringify(r.result)).toContain('[redacted]');
      expectNoSecret(r.result, u.secrets());
    }
    // the upstream really received the secret each time (the test would pass vacuously otherwise)
    expect(u.up.received().filter((q) => q.method === 'tools/call').length).toBeGreaterThanOrEqual(3);
  });

  test('a tool error, a JSON-RPC error and an HTTP 502 that quote the headers are masked', async () => {
    for (const mode of ['is_error', 'mcp_error', 'http_502']) {
      const r = await call({ mode });
      expectNoSecret(r.result, u.secrets());
      if (mode === 'http_502') expect(r.result).toEqual({ error: expect.stringMatching(/answered HTTP 502$/) });
    }
  });

  test('a status reason that quotes the headers is masked', async () => {
    await u.up.configure({ fail: { list: 'mcp_error' } });
    const view = await federation.refresh(tenant, 'echo');
    expect(view.status).toBe('error');
    expectNoSecret(view.status_reason, u.secrets());
    await u.up.configure({ fail: {} });
  });
});
