/**
 * The audit log filtered by member in the console (docs/console.md, "/audit"; docs/audit.md, "Who acted"):
 * two approvers decide one action each; an auditor signs in, picks one approver in the Audit page's member
 * select (the tenant's members, GET /api/members), and sees only the records naming that approver, the
 * records GET /api/audit/log?member=<id> answers; "any" shows the whole log again.
 */
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Browser } from 'playwright-core';
import { api, humanSession, newTenant, toolCall } from '../e2e/support/api';
import { ORIGIN, SHOTS, launchChromium, signIn } from './support/browser';

let browser: Browser;

beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(() => browser?.close());

const PASSWORD = 'member-password-123';

async function member(ownerToken: string, name: string, role: string): Promise<{ email: string; token: string }> {
  const email = `${name}-${randomUUID().slice(0, 8)}@e2e.test`;
  const inv = await api('POST', '/members/invitations', { token: ownerToken, body: { email, role } });
  expect((await api('POST', '/members/invitations/accept', { body: { token: inv.body.token, password: PASSWORD } })).status).toBe(201);
  return { email, token: (await api('POST', '/auth/login', { body: { email, password: PASSWORD } })).body.access_token };
}

it('an auditor filters the audit log by member and sees only the records naming that member', async () => {
  const t = await newTenant('Audit by member');
  const ownerToken = await humanSession(t);
  const alice = await member(ownerToken, 'alice', 'approver');
  const bob = await member(ownerToken, 'bob', 'approver');
  const carol = await member(ownerToken, 'carol', 'auditor');
  const queue = async (table: string) => {
    const q = await api('POST', '/mcp/tools/call', { key: t.apiKey, body: toolCall({ tool: 'svc_db', method: 'delete', params: { table } }) });
    expect(q.status).toBe(202);
    return q.body.action_id as string;
  };
  const [first, second] = [await queue('invoices_2019'), await queue('invoices_2020')];
  expect((await api('POST', `/approve/${first}`, { token: alice.token, body: { note: 'archived' } })).body).toMatchObject({ status: 'approved' });
  expect((await api('POST', `/reject/${second}`, { token: bob.token, body: { note: 'still needed' } })).body).toMatchObject({ status: 'rejected' });

  const members = (await api('GET', '/members', { token: carol.token })).body.members as Array<{ id: string; email: string }>;
  const aliceId = members.find((m) => m.email === alice.email)!.id;
  const byAlice = (await api('GET', `/audit/log?member=${aliceId}`, { token: carol.token })).body.records as Array<{ id: number; action_id: string }>;
  expect(byAlice.length).toBeGreaterThan(0);
  expect(byAlice.every((r) => r.action_id === first)).toBe(true);
  const all = (await api('GET', '/audit/log?limit=200', { token: carol.token })).body.records as unknown[];

  const ctx = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  const page = await ctx.newPage();
  page.setDefaultTimeout(20_000);
  await page.goto(`${ORIGIN}/audit`);
  await signIn(page, { email: carol.email, password: PASSWORD });
  await page.getByRole('heading', { level: 1, name: 'Audit log' }).waitFor();
  await page.getByText(`${all.length} of ${all.length} records shown`).waitFor();
  const select = page.getByLabel('Member', { exact: true });
  // the tenant's members by e-mail, with their roles
  for (const m of [alice, bob, carol]) expect(await select.locator('option', { hasText: m.email }).count()).toBe(1);
  await select.selectOption({ label: `${alice.email} (approver)` });
  await page.getByText(`${byAlice.length} of ${byAlice.length} records shown`).waitFor();
  const rows = page.locator('tbody tr[data-action-id]');
  expect(await rows.count()).toBe(byAlice.length);
  expect(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-action-id')))).toEqual(byAlice.map((r) => r.action_id));
  expect(await page.locator(`tbody tr[data-action-id="${second}"]`).count()).toBe(0);
  await page.screenshot({ path: path.join(SHOTS, 'audit-member-filter.png'), fullPage: true });

  await select.selectOption('');
  await page.getByText(`${all.length} of ${all.length} records shown`).waitFor();
  await ctx.close();
});
