/**
 * The shadow rollout on the console's Policy page (docs/console.md, "Policy"; docs/policy.md, "Shadow
 * rollout"): a candidate that denies one tool runs in shadow while governed calls arrive; the page shows the
 * counts by live → candidate decision, the rule behind the differences and the differing calls, opens a
 * sample's audit record, and a human promotes the candidate (ConfirmAction) so it is live from the next call.
 */
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { api, call, eventually, newTenant } from '../e2e/support/api';
import { ORIGIN, SHOTS, launchChromium, signIn } from './support/browser';

let browser: Browser;

beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(() => browser?.close());

const LIVE = `package agw.custom

import rego.v1

deny contains "no_delete" if input.method == "delete"
`;
const CANDIDATE = `${LIVE}
deny contains "no_wire" if input.tool == "svc_payments_wire"
`;

it('shows the shadow report with its differing calls and their records; Promote makes the candidate live', async () => {
  const t = await newTenant('Shadow console');
  expect((await api('PATCH', '/dashboard/settings', { key: t.apiKey, body: { policy_template: 'custom', custom_policy: LIVE } })).status).toBe(200);
  expect((await api('PUT', '/policy/shadow', { key: t.apiKey, body: { custom_policy: CANDIDATE, max_calls: 500, duration_seconds: 7200 } })).status).toBe(201);
  for (let i = 0; i < 12; i++) {
    const r = await call(t.apiKey, i % 3 === 0 ? { tool: 'svc_payments_wire', method: 'send', params: { amount: 10 } } : {});
    expect(r.status).toBe(200);
  }
  await eventually(async () => (await api('GET', '/policy/shadow', { key: t.apiKey })).body.calls === 12, 20_000);

  const ctx = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  const page = await ctx.newPage();
  page.setDefaultTimeout(20_000);
  await page.goto(`${ORIGIN}/policy`);
  await signIn(page, t);
  await page.getByRole('heading', { level: 2, name: 'Shadow rollout' }).waitFor();
  // no OPA bundle source: the page says where the policy comes from
  await page.getByTestId('bundle-source').getByText('No bundle source: the policy is set here.').waitFor();
  const panel = page.getByTestId('shadow-panel');
  await panel.getByText('12', { exact: true }).first().waitFor();
  await panel.getByRole('table', { name: 'Live → candidate' }).waitFor();
  const rules = panel.getByRole('table', { name: 'Rules behind the differences' });
  expect(await rules.getByRole('row').nth(1).textContent()).toBe('no_wirecandidate adds it4');
  const samples = panel.getByRole('table', { name: 'Latest differing calls' });
  expect(await samples.getByRole('row').count()).toBe(5); // header + 4 differing calls
  await samples.getByRole('button', { name: 'Audit record' }).first().click();
  await panel.getByTestId('sample-records').getByText(/Record #\d+:/).waitFor();
  await panel.screenshot({ path: path.join(SHOTS, 'policy-shadow.png') });

  await panel.getByRole('button', { name: 'Promote the candidate' }).click();
  await panel.getByRole('button', { name: 'Promote now' }).click();
  await panel.getByText(/Promoted: revision \S+ is live from the next call\./).waitFor();
  const next = await call(t.apiKey, { tool: 'svc_payments_wire', method: 'send', params: { amount: 10 } });
  expect(next.status).toBe(403);
  await ctx.close();
});
