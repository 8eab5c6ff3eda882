/**
 * Single sign-on in the console (docs/auth.md, "Single sign-on (OIDC)"): the owner sees the SSO panel of
 * Settings; a colleague clicks "Sign in with SSO" on the sign-in page, gives the work e-mail, signs in at the
 * tenant's identity provider (a real oidc-provider on loopback, test/e2e/support/oidc-idp.mjs) and lands in
 * the console signed in, as a member created just in time with the role its group maps to.
 */
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Browser } from 'playwright-core';
import { api, newTenant } from '../e2e/support/api';
import { E2E_BASE_URL } from '../e2e/support/e2e-env';
import { type Idp, startIdp } from '../e2e/support/sso';
import { ORIGIN, SHOTS, launchChromium, signIn } from './support/browser';

const IDP_PORT = 15150;
const CALLBACK = `${E2E_BASE_URL}/auth/sso/callback`;
const SECRET = `secret-${randomUUID()}`;

let browser: Browser;
let idp: Idp;

beforeAll(async () => {
  browser = await launchChromium();
  idp = await startIdp(IDP_PORT, [{ client_id: 'agw-console', client_secret: SECRET, redirect_uris: [CALLBACK] }]);
});
afterAll(async () => {
  await browser?.close();
  await idp?.stop();
});

it('the SSO panel for the owner; "Sign in with SSO" clicked: signed in through the provider as a new approver', async () => {
  const t = await newTenant('SSO console');
  const domain = `${randomUUID().slice(0, 8)}.acme.test`;
  const put = await api('PUT', '/settings/sso', {
    key: t.apiKey,
    body: { issuer: idp.issuer, client_id: 'agw-console', client_secret: SECRET, domains: [domain], default_role: 'viewer', groups_claim: 'groups', group_roles: { 'agw-approvers': 'approver' } },
  });
  expect(put.status).toBe(200);

  // the owner's SSO panel
  const owner = await browser.newContext({ viewport: { width: 1100, height: 900 } });
  const page = await owner.newPage();
  page.setDefaultTimeout(20_000);
  await page.goto(`${ORIGIN}/settings`);
  await signIn(page, t);
  const panel = page.getByRole('form', { name: 'Single sign-on (OIDC)' });
  await panel.waitFor();
  expect(await page.getByTestId('sso-redirect-uri').textContent()).toBe(CALLBACK);
  expect(await page.getByLabel('Issuer URL').inputValue()).toBe(idp.issuer);
  expect(await page.getByLabel('E-mail domains').inputValue()).toBe(domain);
  expect(await page.getByLabel('Client secret').inputValue()).toBe('');
  await panel.screenshot({ path: path.join(SHOTS, 'sso-settings.png') });
  await owner.close();

  // a colleague signs in by SSO
  const ctx = await browser.newContext({ viewport: { width: 1100, height: 800 } });
  const p = await ctx.newPage();
  p.setDefaultTimeout(20_000);
  await p.goto(`${ORIGIN}/signin`);
  await p.getByRole('button', { name: 'Sign in with SSO' }).click();
  const email = `alice@${domain}`;
  await p.getByLabel('Work e-mail or tenant').fill(email);
  await p.screenshot({ path: path.join(SHOTS, 'sso-signin.png'), fullPage: true });
  await p.getByRole('button', { name: 'Continue with SSO' }).click();
  await p.waitForURL(`${idp.issuer}/interaction/**`);
  await p.getByRole('textbox', { name: 'E-mail' }).fill(email);
  await p.getByLabel('Groups').fill('staff, agw-approvers');
  await p.getByRole('button', { name: 'Sign in' }).click();
  await p.waitForURL(`${ORIGIN}/**`);
  await p.getByText(`${email} · SSO console · approver`).waitFor();
  const nav = p.getByRole('navigation', { name: 'Main' });
  await nav.getByRole('link', { name: 'Approvals' }).waitFor();
  // a reload resumes the session (the refresh cookie set by the callback)
  await p.reload();
  await p.getByText(`${email} · SSO console · approver`).waitFor();
  await ctx.close();

  const members = await api('GET', '/members', { key: t.apiKey });
  expect(members.body.members.find((m: { email: string }) => m.email === email)).toMatchObject({ role: 'approver', email_verified: true });
});

