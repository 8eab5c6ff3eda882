/**
 * GitHub OAuth 2.0 login (passport + passport-github2): GET /auth/github redirects to GitHub,
 * GET /auth/github/callback exchanges the code, reads the user and the verified primary e-mail, and logs
 * in (or signs up) through `Accounts.loginWithGithub`. Stateless: the OAuth `state` is a short-lived signed
 * token (no server session). The session token goes back in the URL fragment of OAUTH_REDIRECT_URL (never
 * in a query string or a log line), or as JSON when that is unset.
 */
import { randomBytes } from 'node:crypto';
import { Router } from 'express';
import { SignJWT, jwtVerify } from 'jose';
import passport from 'passport';
import { Strategy as GitHubStrategy, type Profile } from 'passport-github2';
import { AppError, AuthenticationError, NotFoundError } from '@agw/shared';
import { z } from 'zod';
import type { TenantsFeature } from '../../features/tenants.feature';
import { startConsoleSession } from './console-session.routes';
import { addPaths, queryParam } from '../../openapi/openapi';
import { errors, reply, response } from '../../openapi/schema';
import { sessionTokenSchema } from './auth.routes';

type LoginResult = Awaited<ReturnType<TenantsFeature['accounts']['loginWithGithub']>>;

const githubLoginSchema = sessionTokenSchema.extend({ tenant_id: z.string(), new_account: z.boolean().meta({ description: 'a tenant was created for this GitHub user' }) });

/** OAuth `state` without a session: a signed, 10-minute token carrying a nonce. */
function stateStore(key: Uint8Array) {
  return {
    store(_req: unknown, _meta: unknown, cb: (err: Error | null, state?: string) => void) {
      new SignJWT({ n: randomBytes(12).toString('base64url') })
        .setProtectedHeader({ alg: 'HS256' })
        .setExpirationTime('10m')
        .setAudience('agw-oauth-state')
        .sign(key)
        .then((s) => cb(null, s), (e: Error) => cb(e));
    },
    verify(_req: unknown, state: string, _meta: unknown, cb: (err: Error | null, ok: boolean, info?: unknown) => void) {
      jwtVerify(state ?? '', key, { audience: 'agw-oauth-state', algorithms: ['HS256'] }).then(
        () => cb(null, true),
        () => cb(null, false, { message: 'Invalid or expired OAuth state' }),
      );
    },
  };
}

export function githubRoutes(d: Pick<TenantsFeature, 'accounts' | 'config' | 'logger' | 'consoleRefresh' | 'sessions' | 'tenants'>): Router {
  const r = Router();
  const c = d.config;
  if (!c.githubClientId || !c.githubClientSecret) {
    r.get(['/auth/github', '/auth/github/callback'], () => {
      throw new NotFoundError('GitHub login is not configured on this deployment (GITHUB_CLIENT_ID / GITHUB_CLIENT_SECRET)');
    });
    return r;
  }
  const auth = new passport.Passport();
  auth.use(
    new GitHubStrategy(
      {
        clientID: c.githubClientId,
        clientSecret: c.githubClientSecret,
        callbackURL: `${c.publicBaseUrl}/auth/github/callback`,
        authorizationURL: c.githubAuthorizationUrl,
        tokenURL: c.githubTokenUrl,
        userProfileURL: c.githubUserProfileUrl,
        userEmailURL: c.githubUserEmailUrl,
        scope: ['read:user', 'user:email'],
        allRawEmails: true,
        store: stateStore(c.jwtSecret ? new TextEncoder().encode(`${c.jwtSecret}:oauth-state`) : randomBytes(32)),
      } as unknown as import('passport-github2').StrategyOptions,
      (_access: string, _refresh: string, profile: Profile, done: (err: unknown, user?: LoginResult) => void) => {
        const emails = (profile.emails ?? []) as Array<{ value: string; primary?: boolean; verified?: boolean }>;
        const primary = emails.find((e) => e.primary && e.verified) ?? emails.find((e) => e.verified);
        d.accounts
          .loginWithGithub({ githubId: String(profile.id), login: profile.username ?? `github-${profile.id}`, email: primary?.value ?? null })
          .then((user) => done(null, user), done);
      },
    ),
  );
  r.get('/auth/github', auth.authenticate('github', { session: false }));
  r.get('/auth/github/callback', (req, res, next) => {
    auth.authenticate('github', { session: false }, (err: unknown, user: LoginResult | false, info: { message?: string } | undefined) => {
      if (err instanceof AppError) return next(err);
      if (err) {
        d.logger.warn({ reason: err instanceof Error ? err.message : String(err) }, 'GitHub login failed');
        return next(new AuthenticationError('GitHub login failed'));
      }
      if (!user) return next(new AuthenticationError(info?.message ?? 'GitHub login was refused'));
      if (!c.oauthRedirectUrl) return reply(res, githubLoginSchema, user);
      const fragment = new URLSearchParams({ access_token: user.access_token, token_type: user.token_type, expires_in: String(user.expires_in) });
      // the console's refresh cookie comes with the redirect (the session survives a reload)
      startConsoleSession(d, res, user.access_token).then(() => res.redirect(302, `${c.oauthRedirectUrl}#${fragment.toString()}`), next);
    })(req, res, next);
  });
  return r;
}

const notConfigured = errors[404]('GitHub login is not configured on this deployment');
addPaths({
  '/auth/github': {
    get: {
      security: [],
      summary: 'Log in or sign up with GitHub (OAuth 2.0): redirects the browser to GitHub',
      responses: { 302: { description: 'to GitHub’s authorization page (Location)' }, 404: notConfigured },
    },
  },
  '/auth/github/callback': {
    get: {
      security: [],
      summary: 'GitHub’s redirect back: the session token in the URL fragment of OAUTH_REDIRECT_URL, or as JSON when that is unset',
      parameters: [
        queryParam('code'),
        queryParam('state'),
      ],
      responses: {
        302: { description: 'to OAUTH_REDIRECT_URL#access_token=…&token_type=bearer&expires_in=…' },
        200: response('the session (OAUTH_REDIRECT_URL unset)', githubLoginSchema),
        401: errors[401]('invalid state or code, or no verified e-mail'),
        404: notConfigured,
      },
    },
  },
});
