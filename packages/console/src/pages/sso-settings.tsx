/**
 * The SSO panel of Settings (docs/auth.md, "Single sign-on (OIDC)"), for owners and admins: the tenant's
 * OpenID Connect provider (issuer, client id, client secret: written, never shown back), the e-mail domains
 * bound to the tenant, the role of members created at first sign-in (default, or by group), and
 * "require SSO" (password sign-in off for the tenant's members; the tenant API key stays the break-glass).
 * GET/PUT/DELETE /api/settings/sso; other roles do not see the panel (the gateway answers them 403).
 */
import { useEffect, useState } from 'preact/hooks';
import { ApiError, api, messageOf, ok } from '../lib/api';
import { Alert, ConfirmAction, Field, Time, useData } from '../lib/ui';

const ROLES = ['admin', 'policy_author', 'approver', 'auditor', 'viewer'] as const;

interface SsoConfig {
  issuer: string;
  client_id: string;
  domains: string[];
  default_role: string;
  groups_claim: string | null;
  group_roles: Record<string, string>;
  require_sso: boolean;
  redirect_uri: string;
  updated_by: string;
  updated_at: string;
}

type Loaded = { config: SsoConfig | null; hidden: boolean; redirectUri: string };

const empty = { issuer: '', client_id: '', client_secret: '', domains: '', default_role: 'viewer', groups_claim: '', group_roles: '', require_sso: false };

/** "group=role" lines <-> the mapping. */
const mappingText = (m: Record<string, string>) => Object.entries(m).map(([g, r]) => `${g}=${r}`).join('\n');
function parseMapping(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n').map((l) => l.trim()).filter(Boolean)) {
    const i = line.lastIndexOf('=');
    if (i > 0) out[line.slice(0, i).trim()] = line.slice(i + 1).trim();
  }
  return out;
}

export function SsoSettings() {
  const { data, reload } = useData<Loaded>(async () => {
    const r = await api.GET('/settings/sso');
    const redirectUri = `${location.origin}/api/auth/sso/callback`;
    if (r.response.status === 404) return { config: null, hidden: false, redirectUri };
    if (r.response.status === 403) return { config: null, hidden: true, redirectUri };
    const config = ok(r) as SsoConfig;
    return { config, hidden: false, redirectUri: config.redirect_uri };
  });
  const [form, setForm] = useState(empty);
  const [issues, setIssues] = useState<Record<string, string>>({});
  const [msg, setMsg] = useState<{ kind: 'ok' | 'error'; text: string } | null>(null);
  const [removing, setRemoving] = useState(false);
  useEffect(() => {
    const c = data?.config;
    if (c) setForm({ issuer: c.issuer, client_id: c.client_id, client_secret: '', domains: c.domains.join(', '), default_role: c.default_role, groups_claim: c.groups_claim ?? '', group_roles: mappingText(c.group_roles), require_sso: c.require_sso });
    else setForm(empty);
  }, [data]);
  if (!data || data.hidden) return null;
  const set = (k: keyof typeof empty) => (e: Event) => setForm({ ...form, [k]: (e.currentTarget as HTMLInputElement).value });
  const save = async (e: Event) => {
    e.preventDefault();
    setMsg(null);
    setIssues({});
    const body = {
      issuer: form.issuer.trim(),
      client_id: form.client_id.trim(),
      ...(form.client_secret ? { client_secret: form.client_secret } : {}),
      domains: form.domains.split(/[\s,]+/).filter(Boolean),
      default_role: form.default_role,
      groups_claim: form.groups_claim.trim() || null,
      group_roles: parseMapping(form.group_roles),
      require_sso: form.require_sso,
    };
    try {
      ok(await api.PUT('/settings/sso', { body: body as never }));
      setMsg({ kind: 'ok', text: 'Single sign-on saved.' });
      void reload();
    } catch (err) {
      if (err instanceof ApiError && err.issues.length) {
        setIssues(Object.fromEntries(err.issues.map((i) => [String(i.loc[1] ?? ''), i.msg])));
        setMsg({ kind: 'error', text: 'Some values were refused; see the fields.' });
      } else setMsg({ kind: 'error', text: messageOf(err) });
    }
  };
  const remove = async () => {
    setRemoving(false);
    try {
      ok(await api.DELETE('/settings/sso'));
      setMsg({ kind: 'ok', text: 'Single sign-on removed: members sign in with their passwords again.' });
      void reload();
    } catch (err) {
      setMsg({ kind: 'error', text: messageOf(err) });
    }
  };
  const c = data.config;
  return (
    <form class="card" onSubmit={save} noValidate aria-labelledby="sso-title">
      <h2 id="sso-title">Single sign-on (OIDC)</h2>
      <p>
        Register the gateway at your identity provider as a confidential web client with the redirect URI <code data-testid="sso-redirect-uri">{data.redirectUri}</code>, the
        authorization code flow and PKCE.
        {c && (
          <>
            {' '}
            Last changed by {c.updated_by}, <Time iso={c.updated_at} />.
          </>
        )}
      </p>
      <Field id="sso-issuer" label="Issuer URL" error={issues.issuer} hint="As the provider's discovery document states it, e.g. https://idp.example.com/realms/acme">
        <input id="sso-issuer" type="url" value={form.issuer} onInput={set('issuer')} aria-invalid={!!issues.issuer} />
      </Field>
      <div class="grid">
        <Field id="sso-client-id" label="Client ID" error={issues.client_id}>
          <input id="sso-client-id" value={form.client_id} onInput={set('client_id')} aria-invalid={!!issues.client_id} />
        </Field>
        <Field id="sso-client-secret" label="Client secret" error={issues.client_secret} hint={c ? 'Stored sealed; leave empty to keep it.' : 'Stored sealed, never shown again.'}>
          <input id="sso-client-secret" type="password" autocomplete="off" value={form.client_secret} onInput={set('client_secret')} aria-invalid={!!issues.client_secret} />
        </Field>
      </div>
      <Field id="sso-domains" label="E-mail domains" error={issues.domains} hint="Comma-separated. Verified addresses of these domains may sign in; new ones become members.">
        <input id="sso-domains" value={form.domains} onInput={set('domains')} aria-invalid={!!issues.domains} />
      </Field>
      <div class="grid">
        <Field id="sso-default-role" label="Role of new members" error={issues.default_role}>
          <select id="sso-default-role" value={form.default_role} onChange={set('default_role')}>
            {ROLES.map((r) => (
              <option key={r}>{r}</option>
            ))}
          </select>
        </Field>
        <Field id="sso-groups-claim" label="Groups claim (optional)" error={issues.groups_claim} hint="e.g. groups">
          <input id="sso-groups-claim" value={form.groups_claim} onInput={set('groups_claim')} aria-invalid={!!issues.groups_claim} />
        </Field>
      </div>
      <Field id="sso-group-roles" label="Group → role (one per line: group=role)" error={issues.group_roles} hint="The most privileged match wins; SSO never makes an owner.">
        <textarea id="sso-group-roles" rows={3} value={form.group_roles} onInput={set('group_roles')} aria-invalid={!!issues.group_roles} />
      </Field>
      <label class="check">
        <input id="sso-require" type="checkbox" checked={form.require_sso} onChange={(e) => setForm({ ...form, require_sso: e.currentTarget.checked })} /> Require SSO: password and GitHub
        sign-in are turned off for this tenant's members (the tenant API key still works)
      </label>
      {msg && <Alert kind={msg.kind}>{msg.text}</Alert>}
      <button type="submit">Save single sign-on</button>
      {c && <ConfirmAction open={removing} verb="Remove SSO" openLabel="Remove single sign-on" confirmLabel="Confirm removing single sign-on" onOpen={() => setRemoving(true)} onCancel={() => setRemoving(false)} onConfirm={() => void remove()} />}
    </form>
  );
}
