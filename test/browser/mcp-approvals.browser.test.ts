/**
 * A standard MCP client waits for a human who approves in the console (docs/mcp.md, "Approvals over MCP"):
 * the official SDK v2 client, at revision 2026-07-28 with URL-mode elicitation, calls a tool the tenant's
 * policy escalates; its elicitation handler opens the page it was given in Chromium, where the approver
 * signs in, sees the exact call alone and clicks Approve; the client's next round gets the upstream's
 * real result. Opened again, the page says how the action was decided.
 */
import path from 'node:path';
import { startFixtures } from '@agw/mcp-fixtures';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { Browser } from 'playwright-core';
import { api, newTenant } from '../e2e/support/api';
import { E2E_BASE_URL } from '../e2e/support/e2e-env';
import { ORIGIN, SHOTS, launchChromium, signIn, watchedPage } from './support/browser';

let browser: Browser;
let fixtures: Awaited<ReturnType<typeof startFixtures>>;

beforeAll(async () => {
  browser = await launchChromium();
  fixtures = await startFixtures({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await browser?.close();
  await fixtures?.close();
});

it('the v2 client’s URL elicitation opens the action’s page; a human approves it in Chromium; the client’s next round gets the result', async () => {
  const t = await newTenant('Console MCP approvals');
  expect((await api('POST', '/upstreams', { key: t.apiKey, body: { name: 'fx', url: `${fixtures.url}/mutable/mcp` } })).body.status).toBe('connected');
  const policy = ['package agw.custom', '', 'import rego.v1', '', 'approval contains "large sums need a human" if {', '  input.method == "add"', '  input.params.a > 1000', '}', ''].join('\n');
  expect((await api('PATCH', '/dashboard/settings', { key: t.apiKey, body: { policy_template: 'custom', custom_policy: policy } })).status).toBe(200);

  const { context, page, pageErrors } = await watchedPage(browser);
  let opened = '';

  const client = new Client({ name: 'e2e-v2-console-approval', version: '1.0.0' }, { capabilities: { elicitation: { url: {} } }, versionNegotiation: { mode: { pin: '2026-07-28' } } });
  client.setRequestHandler('elicitation/create', async (request) => {
    // what a host does with a URL elicitation: show the user the page (here: the approver opens it)
    opened = (request.params as { url: string }).url;
    await page.goto(opened);
    await signIn(page, t);
    await page.waitForURL(opened);
    const card = page.locator('li.card.approval');
    await card.waitFor();
    expect(await card.count()).toBe(1);
    const text = await card.innerText();
    expect(text).toContain('fx.add');
    expect(text).toContain('large sums need a human');
    await page.getByText('An MCP client waits for this decision').waitFor();
    await page.screenshot({ path: path.join(SHOTS, 'mcp-approval.png'), fullPage: true });
    await card.getByLabel('Note (optional)').fill('A one-off transfer: fine');
    await card.getByRole('button', { name: 'Approve' }).click();
    await page.getByText(/fx\.add \(.{8}\) approved\./).waitFor();
    return { action: 'accept' as const };
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${E2E_BASE_URL}/mcp/server`), { requestInit: { headers: { authorization: `Bearer ${t.apiKey}` } } }));
  const result = await client.callTool({ name: 'fx__add', arguments: { a: 5000, b: 1 } });
  expect(result.isError).toBeFalsy();
  expect(result.content).toEqual([{ type: 'text', text: '5001' }]);
  const actionId = /\/approvals\/([0-9a-f-]{36})$/.exec(opened)![1];
  expect(opened).toBe(`${ORIGIN}/approvals/${actionId}`);
  expect(result._meta?.['io.agw/action_id']).toBe(actionId);

  // the same page once decided: how it ended
  await page.goto(opened);
  await page.getByText(/no longer waits: it is approved/).waitFor();
  await page.screenshot({ path: path.join(SHOTS, 'mcp-approval-decided.png'), fullPage: true });
  const log = (await api('GET', '/audit/log?limit=50', { key: t.apiKey })).body.records as Array<{ action_id: string; decision: string; details: Record<string, unknown> }>;
  expect(log.find((r) => r.action_id === actionId && r.details.approval === 'approved')?.details).toMatchObject({ decided_by: t.email, note: 'A one-off transfer: fine' });
  expect(pageErrors).toEqual([]);
  await client.close();
  await context.close();
});
