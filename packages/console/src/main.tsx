/** The console: app shell, navigation, and which page a path shows. */
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, ok } from './lib/api';
import { navigate, onLinkClick, usePath } from './lib/router';
import { session } from './lib/session';
import { resumeSession, signOut } from './lib/session-resume';
import { toolsSelection } from './lib/upstreams';
import type { LoginResult, Me } from './lib/wire';
import { Alert } from './lib/ui';
import { SignIn, SignUp } from './pages/auth';
import { Approvals } from './pages/approvals';
import { Audit } from './pages/audit';
import { Policy } from './pages/policy';
import { SettingsPage } from './pages/settings';
import { Sessions } from './pages/sessions';
import { Tools } from './pages/tools';
import { OauthGrants } from './pages/oauth-grants';
import { OauthConsent } from './pages/oauth-consent';
import { AcceptInvitation, Members } from './pages/members';
import { PublicDashboard, Transparency } from './pages/public';
import './styles.css';

/** `roles`: who sees the entry (the gateway's permission table decides what they may do: docs/auth.md, "Roles"); none: every role */
const NAV: { path: string; label: string; roles?: string[] }[] = [
  { path: '/approvals', label: 'Approvals' },
  { path: '/audit', label: 'Audit', roles: ['owner', 'admin', 'policy_author', 'approver', 'auditor'] },
  { path: '/policy', label: 'Policy' },
  { path: '/settings', label: 'Settings', roles: ['owner', 'admin'] },
  { path: '/tools', label: 'Tools' },
  { path: '/clients', label: 'MCP clients' },
  { path: '/sessions', label: 'Managed sessions' },
  { path: '/members', label: 'Members' },
];

/** Whether the signed-in caller's role sees a page (the API key's sessions act as owner). */
const sees = (me: Me | null, path: string) => {
  const n = NAV.find((x) => path.startsWith(x.path));
  return !n?.roles || !me || n.roles.includes(me.role ?? 'owner');
};

function useSession() {
  const [, setTick] = useState(0);
  useEffect(() => session.subscribe(() => setTick((t) => t + 1)), []);
  return session;
}

/** GitHub sign-in comes back to the console with the token in the URL fragment (OAUTH_REDIRECT_URL). */
function takeTokenFromFragment(): void {
  if (!location.hash.includes('access_token=')) return;
  const p = new URLSearchParams(location.hash.slice(1));
  const token = p.get('access_token');
  if (token) session.start(token, Number(p.get('expires_in') ?? 3600));
  history.replaceState(null, '', location.pathname + location.search);
}

/**
 * The page a signed-out visit asked for (a reload signs out: the session is in memory), shown again once
 * the operator has signed in. Held in memory like the session; an explicit sign-out forgets it.
 */
let returnTo: string | null = null;

function Shell() {
  const path = usePath();
  const s = useSession();
  const [me, setMe] = useState<Me | null>(null);
  const [menuOpen, setMenuOpen] = useState(false);

  useEffect(() => {
    if (!s.token) return setMe(null);
    api.GET('/auth/me').then((r) => setMe(ok(r) as Me), () => setMe(null));
  }, [s.token]);
  useEffect(() => setMenuOpen(false), [path]);

  const isPublic = path.startsWith('/public/') || path.startsWith('/transparency') || path === '/invitation';
  const isAuthPage = path === '/signin' || path === '/signup';
  useEffect(() => {
    if (s.restoring) return; // the refresh cookie may resume the session: decide once it has answered
    if (!s.token && !isPublic && !isAuthPage) {
      if (path !== '/') returnTo = path + location.search;
      navigate('/signin', true);
    }
    if (s.token && (isAuthPage || path === '/')) {
      navigate(returnTo ?? '/approvals', true);
      returnTo = null;
    }
  }, [s.token, s.restoring, path]);
  const onSignOut = () => {
    returnTo = null;
    void signOut().then(() => navigate('/signin', true));
  };

  let page;
  if (path.startsWith('/public/')) page = <PublicDashboard slug={decodeURIComponent(path.slice('/public/'.length))} />;
  else if (path.startsWith('/transparency')) page = <Transparency tenantId={path.split('/')[2]} />;
  else if (path === '/signup') page = <SignUp />;
  else if (path === '/invitation') page = <AcceptInvitation />;
  else if (!s.token) page = s.restoring ? <p aria-live="polite">Resuming your session…</p> : <SignIn reason={s.reason} />;
  else if (!sees(me, path)) page = <Alert kind="warn">Your role ({me?.role}) has no access to this page.</Alert>;
  else if (path.startsWith('/members')) page = <Members me={me} />;
  else if (path.startsWith('/approvals')) page = <Approvals me={me} />;
  else if (path.startsWith('/audit')) page = <Audit me={me} />;
  else if (path.startsWith('/policy')) page = <Policy />;
  else if (path.startsWith('/settings')) page = <SettingsPage />;
  else if (path.startsWith('/sessions')) page = <Sessions />;
  else if (path.startsWith('/clients')) page = <OauthGrants />;
  else if (path.startsWith('/oauth/consent/')) page = <OauthConsent id={decodeURIComponent(path.slice('/oauth/consent/'.length))} />;
  else if (toolsSelection(path) !== undefined) page = <Tools selected={toolsSelection(path) ?? null} />;
  else page = <Alert kind="warn">No page at {path}.</Alert>;

  return (
    <div class="shell" onClick={onLinkClick}>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href={s.token ? '/approvals' : '/signin'}>
          <span aria-hidden="true">◆</span> Governance Console
        </a>
        {s.token && (
          <>
            <button type="button" class="menu-toggle" aria-expanded={menuOpen} aria-controls="nav" onClick={() => setMenuOpen(!menuOpen)}>
              Menu
            </button>
            <nav id="nav" aria-label="Main" class={menuOpen ? 'open' : ''}>
              <ul>
                {NAV.filter((n) => sees(me, n.path)).map((n) => (
                  <li key={n.path}>
                    <a href={n.path} aria-current={path.startsWith(n.path) ? 'page' : undefined}>
                      {n.label}
                    </a>
                  </li>
                ))}
              </ul>
              <div class="who">
                <span title={me?.tenant_id}>{me ? `${me.email ?? 'API key'} · ${me.tenant_name ?? ''}${me.role ? ` · ${me.role}` : ''}` : ''}</span>
                <button type="button" class="secondary" onClick={onSignOut}>
                  Sign out
                </button>
              </div>
            </nav>
          </>
        )}
      </header>
      <main id="main" tabIndex={-1}>
        {page}
      </main>
    </div>
  );
}

export type { LoginResult };
takeTokenFromFragment();
if (session.token) session.restored();
else void resumeSession();
render(<Shell />, document.getElementById('app')!);
