/**
 * E-mail verification against the real Postgres: a link works once (a second use is a 409), and with
 * `requireVerifiedEmail` (the production profile's rule) a password login waits for the verification.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { AppError, type Db, createLogger, openTestDb } from '@agw/shared';
import { Accounts } from '../src/tenants/accounts';
import { SessionTokens } from '../src/tenants/session-tokens';
import { TenantRepository } from '../src/tenants/tenant.repository';

let db: Db;

beforeAll(async () => {
  db = await openTestDb();
});
afterAll(() => db.destroy());

/** An Accounts whose "e-mail" (the logged verification link) the test can read. */
function accounts(requireVerifiedEmail: boolean) {
  const links: string[] = [];
  const logger = createLogger('test', 'silent');
  logger.info = ((o: { verify_url?: string }) => {
    if (o?.verify_url) links.push(o.verify_url);
  }) as typeof logger.info;
  const a = new Accounts(new TenantRepository(db), new SessionTokens('secret-for-tests-only', 600), {
    publicBaseUrl: 'http://gw.test/api',
    adminEmails: new Set(),
    logger,
    verifySecret: randomBytes(32),
    requireVerifiedEmail,
  });
  return { a, token: () => new URL(links.at(-1)!).searchParams.get('token')! };
}

const code = async (p: Promise<unknown>) => p.then(() => 'ok', (e: AppError) => `${e.code}: ${e.message}`);

describe('e-mail verification', () => {
  it('refuses a password login before the address is verified, then allows it; a link works once', async () => {
    const { a, token } = accounts(true);
    const email = `v-${randomUUID()}@example.com`;
    await a.signup({ email, password: 'a-long-password', tenant_name: 'V' });
    expect(await code(a.login({ email, password: 'a-long-password' }))).toMatch(/^forbidden: E-mail address not verified/);
    expect(await code(a.login({ email, password: 'wrong-password' }))).toMatch(/^unauthenticated/);
    await expect(a.verifyEmail(token())).resolves.toEqual({ verified: true, email });
    expect(await code(a.login({ email, password: 'a-long-password' }))).toBe('ok');
    expect(await code(a.verifyEmail(token()))).toMatch(/^conflict: This verification link was used already/);
    expect(await code(a.verifyEmail('not-a-token'))).toMatch(/^unauthenticated/);
  });

  it('lets an unverified user log in where the rule is off (the local profile without AUTH_REQUIRE_VERIFIED_EMAIL)', async () => {
    const { a } = accounts(false);
    const email = `u-${randomUUID()}@example.com`;
    await a.signup({ email, password: 'a-long-password', tenant_name: 'U' });
    expect(await code(a.login({ email, password: 'a-long-password' }))).toBe('ok');
  });
});
