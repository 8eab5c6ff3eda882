/**
 * Members in the console (docs/console.md, "Members"; docs/auth.md, "Members, invitations and roles"): an
 * owner invites an approver on the Members page; the approver opens the invitation link, chooses a password,
 * signs in, and sees the Approvals page but no Settings (neither in the navigation nor at its address).
 */
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { randomUUID } from 'node:crypto';
import { newTenant } from '../e2e/support/api';
import { ORIGIN, SHOTS, launchChromium, signIn } from './support/browser';

let browser: Browser;

beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(() => browser?.close());

it('an owner invites an approver, who accepts, signs in, sees Approvals and gets no Settings', async () => {
  const t = await newTenant('Members console');
  const owner = await browser.newContext({ viewport: { width: 1100, height: 800 } });
  const page = await owner.newPage();
  page.setDefaultTimeout(20_000);
  await page.goto(`${ORIGIN}/members`);
  await signIn(page, t);
  await page.getByRole('heading', { level: 1, name: 'Members' }).waitFor();
  expect(await page.getByLabel(`Role of ${t.email}`).inputValue()).toBe('owner');

  const email = `approver-${randomUUID().slice(0, 8)}@e2e.test`;
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Role', { exact: true }).selectOption('approver');
  await page.getByRole('button', { name: 'Send invitation' }).click();
  await page.getByText(`${email} is invited as Approver.`).waitFor();
  const link = (await page.getByTestId('secret-value').textContent())!;
  expect(link).toMatch(new RegExp(`^${ORIGIN}/invitation#token=agwi_`));
  await page.getByTestId('invitations').getByText(email).waitFor();
  await page.screenshot({ path: path.join(SHOTS, 'members.png'), fullPage: true });

  const invitee = await browser.newContext({ viewport: { width: 1100, height: 800 } });
  const p2 = await invitee.newPage();
  p2.setDefaultTimeout(20_000);
  await p2.goto(link);
  await p2.getByRole('heading', { level: 1, name: 'Accept the invitation' }).waitFor();
  await p2.getByLabel('Choose a password').fill('approver-password-123');
  await p2.screenshot({ path: path.join(SHOTS, 'invitation-accept.png'), fullPage: true });
  await p2.getByRole('button', { name: 'Join the tenant' }).click();
  await p2.getByRole('heading', { level: 1, name: 'Welcome' }).waitFor();
  await p2.getByRole('link', { name: 'Continue to sign in' }).click();
  await signIn(p2, { email, password: 'approver-password-123' });
  await p2.getByRole('heading', { level: 1, name: 'Approvals' }).waitFor();
  await p2.getByText(`${email} · Members console · approver`).waitFor();
  const nav = p2.getByRole('navigation', { name: 'Main' });
  await nav.getByRole('link', { name: 'Approvals' }).waitFor();
  expect(await nav.getByRole('link', { name: 'Settings' }).count()).toBe(0);
  expect(await nav.getByRole('link', { name: 'Audit' }).count()).toBe(1);
  await p2.screenshot({ path: path.join(SHOTS, 'members-approver-view.png'), fullPage: true });
  await p2.goto(`${ORIGIN}/settings`);
  await p2.getByText('Your role (approver) has no access to this page.').waitFor();

  // the owner sees the new member; the invitation is no longer pending
  await page.reload();
  await page.locator(`tr[data-member="${email}"]`).waitFor();
  await page.getByText('No invitation is pending.').waitFor();
  await owner.close();
  await invitee.close();
});
