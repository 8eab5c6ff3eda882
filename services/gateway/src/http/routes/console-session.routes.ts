/**
 * The console's session cookie (docs/console.md, "The session token"): a sign-in (password or GitHub)
 * also sets the HttpOnly refresh cookie; `POST /api/auth/refresh` trades it for a new access token (and
 * rotates it); `POST /api/auth/logout` revokes it. Public routes (the cookie is the credential); a
 * cross-site Origin is refused, on top of SameSite=Strict.
 */
import { type Request, type Response, Router } from 'express';
import { z } from 'zod';
import { AuthenticationError, ForbiddenError } from '@agw/shared';
import type { TenantsFeature } from '../../features/tenants.feature';
import { originRefusal } from '../../mcp/origin-guard';
import { addPaths } from '../../openapi/openapi';
import { errors, reply, response } from '../../openapi/schema';
import { REFRESH_COOKIE, REFRESH_COOKIE_PATH, refreshCookieOf } from '../../tenants/console-refresh';

/** What a console session (its refresh cookie) uses. */
export type ConsoleSessionDeps = Pick<TenantsFeature, 'config' | 'consoleRefresh' | 'sessions' | 'tenants'>;

const sessionTokenSchema = z.object({ access_token: z.string(), token_type: z.literal('bearer'), expires_in: z.number().int() });
const signedOutSchema = z.object({ status: z.literal('signed_out') });

/** Sets the refresh cookie of a new console session for the user an access token names. */
export async function startConsoleSession(d: ConsoleSessionDeps, res: Response, accessToken: string): Promise<void> {
  const claims = await d.sessions.verify(accessToken);
  if (!claims || claims.viaApiKey) return;
  setCookie(d, res, await d.consoleRefresh.issue({ tenantId: claims.tenantId, userId: claims.userId }));
}

function setCookie(d: ConsoleSessionDeps, res: Response, token: string): void {
  res.cookie(REFRESH_COOKIE, token, { httpOnly: true, sameSite: 'strict', secure: d.config.profile !== 'local', path: REFRESH_COOKIE_PATH, maxAge: d.consoleRefresh.ttlSeconds * 1000 });
}

function clearCookie(d: ConsoleSessionDeps, res: Response): void {
  res.clearCookie(REFRESH_COOKIE, { httpOnly: true, sameSite: 'strict', secure: d.config.profile !== 'local', path: REFRESH_COOKIE_PATH });
}

export function consoleSessionRoutes(d: ConsoleSessionDeps): Router {
  const r = Router();
  const sameSite = (req: Request) => {
    const why = originRefusal({ publicBaseUrl: d.config.publicBaseUrl, allowedOrigins: [], local: d.config.profile === 'local' }, req.get('origin'), undefined);
    if (why) throw new ForbiddenError(`A console session is refreshed from the console's own origin only (${why})`);
  };
  r.post('/auth/refresh', async (req, res) => {
    sameSite(req);
    const token = refreshCookieOf(req.get('cookie'));
    const rotated = token ? await d.consoleRefresh.rotate(token) : undefined;
    const user = rotated ? await d.tenants.getUser(rotated.tenantId, rotated.userId) : undefined;
    if (!rotated || !user) {
      clearCookie(d, res);
      throw new AuthenticationError('No console session to resume: sign in again');
    }
    setCookie(d, res, rotated.next);
    reply(res, sessionTokenSchema, await d.sessions.issue({ userId: user.id, tenantId: rotated.tenantId, email: user.email }));
  });
  r.post('/auth/logout', async (req, res) => {
    sameSite(req);
    const token = refreshCookieOf(req.get('cookie'));
    if (token) await d.consoleRefresh.revoke(token);
    clearCookie(d, res);
    reply(res, signedOutSchema, { status: 'signed_out' });
  });
  return r;
}

addPaths({
  '/auth/refresh': {
    post: {
      security: [],
      summary: 'Resume the console session: the HttpOnly refresh cookie (set by sign-in, rotated here) for a new access token',
      responses: { 200: response('a new access token (and a rotated refresh cookie)', sessionTokenSchema), 401: errors[401]('no valid refresh cookie (a reused one revokes its session)'), 403: errors[403]('another origin') },
    },
  },
  '/auth/logout': {
    post: { security: [], summary: 'Sign out of the console: the refresh cookie’s session is revoked and the cookie cleared', responses: { 200: response('signed out', signedOutSchema), 403: errors[403]('another origin') } },
  },
});
