/**
 * What every browser test of the console shares: where the console is, where screenshots go, Debian's
 * Chromium (TOOLCHAIN-NOTES), and signing in on the console's sign-in page.
 */
import path from 'node:path';
import { type Browser, type BrowserContext, type Page, chromium } from 'playwright-core';
import { E2E_BASE_URL } from '../../e2e/support/e2e-env';

/** The console's origin (the gateway of the browser tests' fleet). */
export const ORIGIN = new URL(E2E_BASE_URL).origin;

/** where the screenshots go: docs/console (shown by docs/console.md), or CONSOLE_SHOTS_DIR for a trial run that leaves the docs alone */
export const SHOTS = process.env.CONSOLE_SHOTS_DIR ? path.resolve(process.env.CONSOLE_SHOTS_DIR) : path.resolve(__dirname, '../../../docs/console');

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

/** On a page the console has sent to its sign-in page: signs in with an e-mail and a password. */
export async function signIn(page: Page, who: { email: string; password: string }): Promise<void> {
  await page.waitForURL('**/signin');
  await page.getByLabel('E-mail').fill(who.email);
  await page.getByLabel('Password').fill(who.password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

/** A page in a context of its own (1100 x 900, 20 s timeouts) that keeps the script errors it meets. */
export async function watchedPage(browser: Browser): Promise<{ context: BrowserContext; page: Page; pageErrors: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  const pageErrors: string[] = [];
  page.on('pageerror', (e) => pageErrors.push(e.message));
  return { context, page, pageErrors };
}
