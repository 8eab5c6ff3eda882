/**
 * Keeping the console signed in across reloads and tabs (docs/console.md, "The session token"): the access
 * token stays in memory (lib/session.ts); the HttpOnly refresh cookie, which no script can read, is traded
 * for a new one at start-up and shortly before the access token expires. Sign-out revokes it on the server
 * and tells the other tabs (BroadcastChannel), which sign out too.
 */
import { api } from './api';
import { session } from './session';

const channel = typeof BroadcastChannel === 'function' ? new BroadcastChannel('agw-console-session') : undefined;
let refreshTimer: ReturnType<typeof setTimeout> | undefined;

/** Trades the refresh cookie for an access token; false when there is no session to resume. */
export async function resumeSession(): Promise<boolean> {
  try {
    const r = await api.POST('/auth/refresh');
    if (!r.response.ok || !r.data) return false;
    session.start(r.data.access_token, r.data.expires_in);
    return true;
  } catch {
    return false;
  } finally {
    session.restored();
  }
}

/** Signs out here and on the server (the cookie's session is revoked), and in every other tab. */
export async function signOut(reason = 'You have signed out.'): Promise<void> {
  await api.POST('/auth/logout').catch(() => undefined);
  session.end(reason);
  channel?.postMessage('signed-out');
}

// a minute before the access token ends, a new one from the cookie (else the session ends as before)
session.subscribe(() => {
  clearTimeout(refreshTimer);
  if (!session.token) return;
  const inMs = session.expiresAt - Date.now() - 60_000;
  if (inMs > 0) refreshTimer = setTimeout(() => void resumeSession().then((ok) => ok || session.expire()), inMs);
});

channel?.addEventListener('message', (e) => {
  if (e.data === 'signed-out' && session.token) session.end('You signed out in another tab.');
});
