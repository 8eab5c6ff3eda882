/**
 * A console session survives a reload and a second tab, and a sign-out ends it in every tab
 * (docs/console.md, "The session token"): the access token stays in the page's memory, the HttpOnly refresh
 * cookie (scoped to /api/auth, SameSite=Strict) resumes it; no JWT is ever readable by a script.
 */
import type { Browser } from 'playwright-core';
import { newTenant } from '../e2e/support/api';
import { ORIGIN, launchChromium, signIn } from './support/browser';

let browser: Browser;

beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(() => browser?.close());

it('stays signed in across a reload and in a second tab; signing out in one tab signs out the other, for good', async () => {
  const t = await newTenant('Console sessions');
  const context = await browser.newContext({ viewport: { width: 1100, height: 800 } });
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  await page.goto(`${ORIGIN}/approvals`);
  await signIn(page, t);
  await page.getByRole('heading', { level: 1, name: 'Approvals' }).waitFor();

  const cookie = (await context.cookies()).find((c) => c.name === 'agw_refresh')!;
  expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/api/auth' });
  expect(cookie.value).toMatch(/^agwr_/);
  expect(await page.evaluate(() => document.cookie + JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }))).not.toMatch(/eyJ|agwr_/);

  await page.reload();
  await page.getByRole('heading', { level: 1, name: 'Approvals' }).waitFor();
  expect(page.url()).toBe(`${ORIGIN}/approvals`);

  const other = await context.newPage();
  await other.goto(`${ORIGIN}/audit`);
  await other.getByRole('heading', { level: 1, name: 'Audit' }).waitFor();

  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.waitForURL('**/signin');
  await other.getByText('You signed out in another tab.').waitFor();
  await other.reload();
  await other.waitForURL('**/signin');
  expect((await context.cookies()).find((c) => c.name === 'agw_refresh')).toBeUndefined();
  await context.close();
});
