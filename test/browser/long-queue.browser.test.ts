/**
 * A long approval queue in the console (docs/console.md, "A long queue"): 501 policy escalations (2,000 EUR
 * transfers on the financial template) wait before a managed session's held e-mail, so the inbox lists only the oldest 500 and says how many wait in all. The
 * reviewer picks "Why queued: held by the agent platform" and finds the session's call at once
 * (GET /api/approvals?queue_reason=platform_confirmation); the approval link of that one action
 * (`/approvals/<action_id>`, GET /api/approvals?action_id=) shows its card too, however far back it queued.
 */
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { api, eventually, newTenant, toolCall } from '../e2e/support/api';
import { script } from '../e2e/support/stand-in';
import { ORIGIN, SHOTS, launchChromium, signIn, watchedPage } from './support/browser';

let browser: Browser;

beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(() => browser?.close());

it('the inbox says how many wait beyond the 500 it lists; a session’s held call is found by why it waits, and by its link', async () => {
  const t = await newTenant('Console long queue');
  // the financial template sends a 2,000 EUR transfer to a human (limits lifted, as for the fault suite's load)
  const settings = { policy_template: 'financial', policy_config: { business_hours_only: false, daily_transaction_cap: 100_000_000 }, rate_limit_rps: 100_000, rate_limit_burst: 1_000_000 };
  expect((await api('PATCH', '/dashboard/settings', { key: t.apiKey, body: settings })).status).toBe(200);
  // 501 transfers wait (ten at a time)
  let queued = 0;
  const refused: string[] = [];
  for (let round = 0; queued < 501 && round < 80; round++) {
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => api('POST', '/mcp/tools/call', { key: t.apiKey, body: toolCall({ agent_id: 'payments-agent', tool: 'svc_payments', method: 'transfer', params: { amount: 2000, currency: 'EUR', ref: `r${round}-${i}` } }) })));
    queued += answers.filter((a) => a.status === 202).length;
    refused.push(...answers.filter((a) => a.status !== 202).map((a) => `${a.status} ${JSON.stringify(a.body).slice(0, 200)}`));
  }
  expect(refused.slice(0, 3)).toEqual([]);
  expect(queued).toBeGreaterThan(500);

  const cfg = await api('POST', '/managed/agents', { key: t.apiKey, body: { name: 'support-agent', allowed_tools: ['svc_send_email'], require_human_approval: ['svc_send_*'] } });
  const s = (await api('POST', '/managed/sessions', { key: t.apiKey, body: { agent_id: cfg.body.id, user_message: 'Tell the customer their order shipped' } })).body;
  const running = script(s.anthropic_session_id, [{ mcp_call: { tool: 'svc_send_email', arguments: { method: 'send', params: { to: 'customer@example.com', subject: 'Your order', body: 'It shipped today.' } } } }, { idle: 'end_turn' }]);
  const held = await eventually(async () => (await api('GET', '/approvals?queue_reason=platform_confirmation', { key: t.apiKey })).body.pending[0]);
  const all = (await api('GET', '/approvals', { key: t.apiKey })).body;
  expect(all.pending).toHaveLength(500);
  expect(all.total).toBe(queued + 1);
  expect(all.pending.map((p: { action_id: string }) => p.action_id)).not.toContain(held.action_id);

  const { context, page, pageErrors } = await watchedPage(browser);
  await page.goto(`${ORIGIN}/approvals`);
  await signIn(page, t);
  await page.getByText(`${queued + 1} pending, the oldest 500 shown`).waitFor();
  expect(await page.locator('li.card.approval').count()).toBe(500);
  expect(await page.locator(`li.card.approval[data-action-id="${held.action_id}"]`).count()).toBe(0);
  await page.screenshot({ path: path.join(SHOTS, 'approvals-long-queue.png') });

  await page.getByLabel('Why queued').selectOption('platform_confirmation');
  const card = page.locator(`li.card.approval[data-action-id="${held.action_id}"]`);
  await card.waitFor();
  await page.getByText(/^1 pending ·/).waitFor();
  expect(await page.locator('li.card.approval').count()).toBe(1);
  expect(await card.innerText()).toContain('the agent platform holds this call until you decide');
  await page.screenshot({ path: path.join(SHOTS, 'approvals-held-by-platform.png') });

  // the one action's link, as a notification would carry it
  await page.goto(`${ORIGIN}/approvals/${held.action_id}`);
  await page.locator(`li.card.approval[data-action-id="${held.action_id}"]`).waitFor();
  expect(await page.locator('li.card.approval').count()).toBe(1);
  await page.getByRole('button', { name: 'Approve' }).click();
  await page.getByText(/svc_send_email\.send \(.{8}\) approved\./).waitFor();
  const { results } = await running;
  expect(JSON.parse(results[0].content[0].text)).toMatchObject({ status: 'allowed', action_id: held.action_id });
  expect(pageErrors).toEqual([]);
  await context.close();
}, 120_000);
