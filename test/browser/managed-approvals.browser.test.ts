/**
 * A managed session pauses for a human, who approves in the console (docs/managed.md, "Tools that ask a
 * human"): the platform stand-in holds the e-mail tool (always_ask), the item waits in the Approvals inbox
 * with its session and the platform's tool-use id, a click on Approve sends `user.tool_confirmation` allow,
 * the session resumes, the call runs once through the gateway and the session completes.
 */
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { api, eventually, newTenant } from '../e2e/support/api';
import { script, standIn } from '../e2e/support/stand-in';
import { ORIGIN, SHOTS, launchChromium, signIn, watchedPage } from './support/browser';

let browser: Browser;

beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(() => browser?.close());

it('a session waits in the Approvals inbox; a human approves in Chromium; the session resumes, the e-mail is sent once and the session completes', async () => {
  const t = await newTenant('Console platform approvals');
  const cfg = await api('POST', '/managed/agents', { key: t.apiKey, body: { name: 'support-agent', allowed_tools: ['svc_web_search', 'svc_send_email'], require_human_approval: ['svc_send_*'] } });
  expect(cfg.status).toBe(200);
  const s = (await api('POST', '/managed/sessions', { key: t.apiKey, body: { agent_id: cfg.body.id, user_message: 'Tell the customer their order shipped' } })).body;
  const running = script(s.anthropic_session_id, [
    { mcp_call: { tool: 'svc_web_search', arguments: { method: 'search', params: { q: 'order 1042' } } } },
    { mcp_call: { tool: 'svc_send_email', arguments: { method: 'send', params: { to: 'customer@example.com', subject: 'Your order', body: 'It shipped today.' } } } },
    { message: 'Told the customer.' },
    { idle: 'end_turn' },
  ]);

  const { context, page, pageErrors } = await watchedPage(browser);
  await page.goto(`${ORIGIN}/approvals`);
  await signIn(page, t);
  await page.getByRole('heading', { level: 1, name: 'Approvals' }).waitFor();

  // the card of the held call (the inbox polls every 3 s)
  const card = page.locator('li.card.approval', { hasText: s.session_id });
  await card.waitFor();
  const text = await card.innerText();
  expect(text).toContain('svc_send_email.send');
  expect(text).toContain('the agent platform holds this call until you decide');
  expect(text).toMatch(/platform tool use sevt_/);
  expect(text).not.toContain('customer@example.com'); // personal data stays an encrypted envelope
  const actionId = await card.getAttribute('data-action-id');
  expect((await standIn('GET', `/_stand-in/sessions/${s.anthropic_session_id}`)).status).toBe('idle');
  await page.screenshot({ path: path.join(SHOTS, 'managed-approval.png'), fullPage: true });

  await card.getByLabel('Note (optional)').fill('Checked the order: fine to send');
  await card.getByRole('button', { name: 'Approve' }).click();
  await page.getByText(/svc_send_email\.send \(.{8}\) approved\./).waitFor();

  const { results } = await running;
  expect(JSON.parse(results[1].content[0].text)).toMatchObject({ status: 'allowed', action_id: actionId });
  await eventually(async () => (await api('GET', `/managed/sessions/${s.session_id}/status`, { key: t.apiKey })).body.status === 'completed');
  const log = (await api('GET', '/audit/log?limit=1000', { key: t.apiKey })).body.records as Array<{ action_id: string; source: string; decision: string; details: Record<string, unknown> }>;
  const ran = log.filter((r) => r.action_id === actionId && r.source === 'mcp_governed' && r.decision === 'allow');
  expect(ran).toHaveLength(1);
  const decision = log.find((r) => r.action_id === actionId && r.details.approval === 'approved');
  expect(decision?.details).toMatchObject({ decided_by: t.email, note: 'Checked the order: fine to send' });
  expect(pageErrors).toEqual([]);
  await context.close();
});
