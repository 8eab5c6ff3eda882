/** Sign in (e-mail + password, single sign-on, or GitHub) and sign up (the API key is shown once). */
import { useState } from 'preact/hooks';
import { ApiError, api, messageOf, ok } from '../lib/api';
import { session } from '../lib/session';
import { Alert, ContinueToSignIn, Field, NarrowCard, ShownOnce } from '../lib/ui';
import type { LoginResult, SignupResult } from '../lib/wire';

export function SignIn({ reason }: { reason: string | null }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const r = ok(await api.POST('/auth/login', { body: { email, password } as never })) as LoginResult;
      session.start(r.access_token, r.expires_in);
    } catch (err) {
      setError(err instanceof ApiError && err.status === 401 ? 'Wrong e-mail or password.' : messageOf(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <NarrowCard id="signin-title" title="Sign in">
      {reason && <Alert kind="info">{reason}</Alert>}
      {error && <Alert>{error}</Alert>}
      <form onSubmit={submit}>
        <Field id="email" label="E-mail">
          <input id="email" type="email" autocomplete="username" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
        </Field>
        <Field id="password" label="Password">
          <input id="password" type="password" autocomplete="current-password" required value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
        </Field>
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      <p class="or">or</p>
      <SsoSignIn />
      <a class="button secondary" href="/api/auth/github">
        Sign in with GitHub
      </a>
      <p class="muted">
        No account yet? <a href="/signup">Create a tenant</a>.
      </p>
    </NarrowCard>
  );
}

/**
 * Sign in with the organisation's identity provider: the work e-mail (or the tenant's slug) names the
 * tenant; the browser goes to GET /api/auth/sso/start, which redirects to the provider and, once signed in
 * there, back to the console (signed in).
 */
function SsoSignIn() {
  const [open, setOpen] = useState(false);
  const [who, setWho] = useState('');
  if (!open)
    return (
      <button type="button" class="button secondary" onClick={() => setOpen(true)}>
        Sign in with SSO
      </button>
    );
  return (
    // a navigation, not a form submission: the provider is another origin (the CSP's form-action is 'self')
    <form
      aria-label="Single sign-on"
      onSubmit={(e) => {
        e.preventDefault();
        location.assign(`/api/auth/sso/start?tenant=${encodeURIComponent(who.trim())}`);
      }}
    >
      <Field id="sso-tenant" label="Work e-mail or tenant" hint="Your organisation's identity provider signs you in.">
        <input id="sso-tenant" name="tenant" autocomplete="username" required value={who} onInput={(e) => setWho(e.currentTarget.value)} />
      </Field>
      <button type="submit" class="secondary">
        Continue with SSO
      </button>
    </form>
  );
}

export function SignUp() {
  const [form, setForm] = useState({ email: '', password: '', tenant_name: '' });
  const [issues, setIssues] = useState<Record<string, string>>({});
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<SignupResult | null>(null);
  const set = (k: keyof typeof form) => (e: Event) => setForm({ ...form, [k]: (e.currentTarget as HTMLInputElement).value });
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(null);
    setIssues({});
    try {
      setDone(ok(await api.POST('/auth/signup', { body: form as never })) as SignupResult);
    } catch (err) {
      if (err instanceof ApiError && err.issues.length) setIssues(Object.fromEntries(err.issues.map((i) => [String(i.loc[i.loc.length - 1]), i.msg])));
      else setError(err instanceof ApiError && err.status === 409 ? 'This e-mail already has an account.' : messageOf(err));
    }
  };
  if (done)
    return (
      <NarrowCard id="signup-title" title="Tenant created">
        <p>
          Tenant <strong>{done.slug}</strong> ({done.tenant_id}).
        </p>
        <ShownOnce label="Your API key" value={done.api_key} />
        <p>Agents send it as the X-API-Key header. You can rotate it later in Settings.</p>
        <ContinueToSignIn />
      </NarrowCard>
    );
  return (
    <NarrowCard id="signup-title" title="Create a tenant">
      {error && <Alert>{error}</Alert>}
      <form onSubmit={submit} noValidate>
        <Field id="su-tenant" label="Organisation name" error={issues.tenant_name}>
          <input id="su-tenant" required value={form.tenant_name} onInput={set('tenant_name')} aria-invalid={!!issues.tenant_name} />
        </Field>
        <Field id="su-email" label="E-mail" error={issues.email}>
          <input id="su-email" type="email" autocomplete="username" required value={form.email} onInput={set('email')} aria-invalid={!!issues.email} />
        </Field>
        <Field id="su-password" label="Password" hint="At least 8 characters." error={issues.password}>
          <input id="su-password" type="password" autocomplete="new-password" required value={form.password} onInput={set('password')} aria-invalid={!!issues.password} />
        </Field>
        <button type="submit">Create tenant</button>
      </form>
      <p class="muted">
        Already have an account? <a href="/signin">Sign in</a>.
      </p>
    </NarrowCard>
  );
}
