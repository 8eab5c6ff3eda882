/**
 * A standard MCP client signs in through the console (docs/auth.md, "MCP clients: OAuth 2.1"): the MCP SDK's
 * own client discovers the authorization server from the 401, registers, and sends the user's browser to
 * authorize with PKCE; in Chromium the human signs in (the console comes back to the consent page after
 * the sign-in), names the agent identity and clicks Approve; the browser lands on the client's redirect URI
 * with the code; the client gets its tokens, lists and calls a governed tool, and the audit record names
 * the granted agent. The consent page is photographed into docs/console/.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { startFixtures } from '@agw/mcp-fixtures';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Browser } from 'playwright-core';
import { api, newTenant } from '../e2e/support/api';
import { E2E_BASE_URL } from '../e2e/support/e2e-env';
import { MemoryAuthProvider } from '../e2e/support/memory-oauth-client';
import { SHOTS, launchChromium, signIn } from './support/browser';

let browser: Browser;
let callback: http.Server;
let redirectUri: string;
const codes: URLSearchParams[] = [];

beforeAll(async () => {
  browser = await launchChromium();
  // the client's redirect URI: a loopback listener, as desktop clients use (RFC 8252)
  callback = http.createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    if (u.pathname === '/callback') codes.push(u.searchParams); // not the browser's /favicon.ico
    res.writeHead(200, { 'content-type': 'text/html' }).end('<title>signed in</title><p>You can close this window.</p>');
  });
  await new Promise<void>((r) => callback.listen(0, '127.0.0.1', r));
  redirectUri = `http://127.0.0.1:${(callback.address() as AddressInfo).port}/callback`;
});

afterAll(async () => {
  await browser?.close();
  callback?.closeAllConnections();
  await new Promise((r) => callback?.close(r));
});

it('an MCP client signs in through the console: discovery, registration, consent clicked in the browser, tokens, a governed call as the granted agent', async () => {
  const t = await newTenant('OAuth browser');
  const fixtures = await startFixtures({ port: 0, host: '127.0.0.1' });
  try {
    expect((await api('POST', '/upstreams', { key: t.apiKey, body: { name: 'fx', url: `${fixtures.url}/mutable/mcp` } })).body.status).toBe('connected');
    const auth = new MemoryAuthProvider(() => redirectUri, 'Claude Desktop (browser test)');
    const mcpUrl = new URL(`${E2E_BASE_URL}/mcp/server`);
    await expect(new Client({ name: 'browser-oauth', version: '1.0.0' }).connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: auth }))).rejects.toBeInstanceOf(UnauthorizedError);
    expect(auth.authorizationUrl).toBeDefined();

    // the user's browser: /authorize -> the console's consent page -> sign-in first -> back to the consent
    const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
    page.setDefaultTimeout(20_000);
    await page.goto(auth.authorizationUrl!.href);
    await signIn(page, t);
    const consent = page.getByTestId('oauth-consent');
    await consent.waitFor();
    expect(page.url()).toMatch(/\/oauth\/consent\/[A-Za-z0-9_-]+$/);
    const shown = await consent.innerText();
    expect(shown).toContain('Claude Desktop (browser test)');
    expect(shown).toContain(new URL(redirectUri).host);
    // a dynamically registered client: its name is its own claim, and the page says so
    expect(await page.getByTestId('client-unverified').isVisible()).toBe(true);
    expect(await page.getByLabel('Agent identity').inputValue()).toBe('claude-desktop-browser-test');
    await page.getByLabel('Agent identity').fill('claude-desktop-alice');
    await page.screenshot({ path: path.join(SHOTS, 'oauth-consent.png'), fullPage: true });
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.waitForURL(`${redirectUri}**`);
    await page.close();

    const got = codes.at(-1)!;
    expect(got.get('state')).toBe(auth.authorizationUrl!.searchParams.get('state'));
    const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: auth });
    await transport.finishAuth(got.get('code')!);
    const client = new Client({ name: 'browser-oauth', version: '1.0.0' });
    await client.connect(transport);
    expect((await client.listTools()).tools.map((x) => x.name)).toContain('fx__add');
    expect((await client.callTool({ name: 'fx__add', arguments: { a: 20, b: 22 } })).content).toEqual([{ type: 'text', text: '42' }]);
    await client.close();
    const log = await api('GET', '/audit/log?limit=5', { key: t.apiKey });
    expect(log.body.records.find((r: { tool: string }) => r.tool === 'fx')).toMatchObject({ agent_id: 'claude-desktop-alice', method: 'add' });

    // a signed-in human sees the grant on the MCP clients page and revokes it: the client's token stops at once
    const admin = await browser.newPage({ viewport: { width: 1100, height: 700 } });
    admin.setDefaultTimeout(20_000);
    await admin.goto(`${new URL(E2E_BASE_URL).origin}/clients`);
    await signIn(admin, t);
    const row = admin.getByTestId('oauth-grants').locator('tr', { hasText: 'claude-desktop-alice' });
    await row.waitFor();
    const listed = await row.innerText();
    expect(listed).toContain('Claude Desktop (browser test)');
    expect(listed).toContain('unverified');
    expect(listed).toContain(t.email);
    await admin.screenshot({ path: path.join(SHOTS, 'oauth-grants.png'), fullPage: true });
    await row.getByRole('button', { name: /Revoke the grant/ }).click();
    await admin.getByRole('button', { name: 'Revoke now' }).click();
    // the confirmation itself (the page's intro also says "is revoked": a bare substring matched it at once, or both)
    await admin.getByText(/The grant of .+ is revoked: its tokens stop working at once/).waitFor();
    await row.waitFor({ state: 'detached' });
    await admin.close();
    const refused = await fetch(mcpUrl, {
      method: 'POST',
      headers: { authorization: `Bearer ${auth.tokens()!.access_token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(refused.status).toBe(401);
  } finally {
    await fixtures.close();
  }
});
