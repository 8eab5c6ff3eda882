/**
 * Connecting an upstream that needs OAuth from the console (docs/federation.md, "Upstreams that need
 * OAuth"): a signed-in human opens the upstream on the Tools page and clicks Connect; Chromium goes to the
 * upstream's authorization server (the `@agw/mcp-fixtures` OAuth upstream, built from the MCP SDK's own
 * server-side authorization code, where this browser is signed in as `alice`), which approves and sends it
 * back to the gateway's callback, then to the Tools page: connected, and the upstream's tools are read.
 * Disconnect removes it again. No token is ever readable by the page.
 */
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { type OAuthUpstream, startOAuthUpstream } from '@agw/mcp-fixtures';
import { api, newTenant } from '../e2e/support/api';
import { E2E_OFFSET } from '../e2e/support/e2e-env';
import { ORIGIN, SHOTS, launchChromium, signIn } from './support/browser';

let browser: Browser;
let fx: OAuthUpstream;

beforeAll(async () => {
  browser = await launchChromium();
  fx = await startOAuthUpstream({ port: 15250 + (Math.floor(E2E_OFFSET / 100) % 50) });
});
afterAll(async () => {
  await browser?.close();
  await fx?.close();
});

it('Connect on the Tools page: the upstream sign-in, back to the console, connected; Disconnect', async () => {
  const t = await newTenant('Console upstream OAuth');
  const reg = await api('POST', '/upstreams', { key: t.apiKey, body: { name: 'linear', url: `${fx.url}/mcp`, credential: { type: 'oauth' } } });
  expect(reg.status).toBe(201);
  const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
  // this browser is signed in at the upstream as alice
  await context.addCookies([{ name: 'fixture_user', value: 'alice', url: fx.url }]);
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  await page.goto(`${ORIGIN}/tools/linear`);
  await signIn(page, t);
  const card = page.getByTestId('upstream-connection');
  await card.getByText('Not connected: a human connects it.').waitFor();
  await page.getByRole('button', { name: 'Connect linear' }).click();
  await page.waitForURL(`${ORIGIN}/tools/linear`);
  await page.getByTestId('upstream-connection').getByText('Connected.').waitFor();
  await page.getByTestId('upstream-detail').getByText('whoami').first().waitFor();
  expect(fx.state.issued.length).toBeGreaterThan(0);
  const visible = await page.evaluate(() => document.documentElement.outerHTML + document.cookie + JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }));
  for (const token of fx.state.issued) expect(visible).not.toContain(token);
  if (process.env.CONSOLE_SHOTS_DIR) await page.screenshot({ path: path.join(SHOTS, 'tools-upstream-oauth.png'), fullPage: true });
  await page.getByRole('button', { name: 'Disconnect linear' }).click();
  await page.getByTestId('upstream-connection').getByText('Not connected: a human connects it.').waitFor();
  expect(fx.state.revocations.sort()).toEqual(['access_token', 'refresh_token']);
  await context.close();
});
