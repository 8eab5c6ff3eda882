/**
 * Four-eyes approvals in the console (docs/auth.md, "Four-eyes approvals"): an action needing two approvers
 * shows its quorum ("1 of 2 approvals") and who approved so far on its focused page
 * (/approvals/<action_id>); the owner who issued the agent's key started it, so the button tells them they
 * cannot approve; a second approver's click meets the quorum.
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

const PASSWORD = 'approver-password-123';

async function approver(ownerToken: string, name: string): Promise<{ email: string; token: string }> {
  const email = `${name}-${randomUUID().slice(0, 8)}@e2e.test`;
  const inv = await api('POST', '/members/invitations', { token: ownerToken, body: { email, role: 'approver' } });
  expect((await api('POST', '/members/invitations/accept', { body: { token: inv.body.token, password: PASSWORD } })).status).toBe(201);
  return { email, token: (await api('POST', '/auth/login', { body: { email, password: PASSWORD } })).body.access_token };
}

it('shows the quorum and who approved; the initiator cannot approve; the second approver meets the quorum', async () => {
  const t = await newTenant('Four eyes console');
  const ownerToken = await humanSession(t);
  expect((await api('PATCH', '/dashboard/settings', { token: ownerToken, body: { required_approvers: 2 } })).status).toBe(200);
  const alice = await approver(ownerToken, 'alice');
  const bob = await approver(ownerToken, 'bob');
  const key = (await api('POST', '/api-keys', { token: ownerToken, body: { scope: 'agent', name: 'cleanup-agent' } })).body.api_key as string;
  const q = await api('POST', '/mcp/tools/call', { key, body: toolCall({ agent_id: 'cleanup-agent', tool: 'svc_db', method: 'delete', params: { table: 'invoices_2019' } }) });
  expect(q.status).toBe(202);
  const id = q.body.action_id as string;
  expect((await api('POST', `/approve/${id}`, { token: alice.token, body: { note: 'archived already' } })).status).toBe(202);

  const ctx = await browser.newContext({ viewport: { width: 1100, height: 900 } });
  const page = await ctx.newPage();
  page.setDefaultTimeout(20_000);
  await page.goto(`${ORIGIN}/approvals/${id}`);
  await signIn(page, t);
  const card = page.locator(`li[data-action-id="${id}"]`);
  await card.getByText('1 of 2 approvals').waitFor();
  await card.getByText(`approved by ${alice.email}`).waitFor();
  const own = card.getByRole('button', { name: 'You started this action: another member must approve' });
  await own.waitFor();
  expect(await own.isDisabled()).toBe(true);
  await page.screenshot({ path: path.join(SHOTS, 'approvals-four-eyes.png'), fullPage: true });
  await ctx.close();

  const ctxB = await browser.newContext({ viewport: { width: 1100, height: 900 } });
  const pb = await ctxB.newPage();
  pb.setDefaultTimeout(20_000);
  await pb.goto(`${ORIGIN}/approvals/${id}`);
  await signIn(pb, { email: bob.email, password: PASSWORD });
  const cardB = pb.locator(`li[data-action-id="${id}"]`);
  await cardB.getByText('1 of 2 approvals').waitFor();
  await cardB.getByRole('button', { name: 'Approve (2 of 2)' }).click();
  await pb.getByText(`svc_db.delete (${id.slice(0, 8)}) approved.`).waitFor();
  expect((await api('GET', `/actions/${id}`, { token: ownerToken })).body).toMatchObject({ status: 'approved', required_approvers: 2, approval_count: 2 });
  await pb.screenshot({ path: path.join(SHOTS, 'approvals-four-eyes-met.png'), fullPage: true });
  await ctxB.close();
});
