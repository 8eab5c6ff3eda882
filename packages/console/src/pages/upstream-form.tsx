/**
 * Add an upstream MCP server (POST /api/upstreams): name, URL, transport, and how it authorizes: none, a
 * bearer token (sealed by the vault's HSM, never shown again) or OAuth (a human signs in at the upstream:
 * Connect on the upstream's card; one connection for the tenant, or each human their own). The server judges every value: a 422 is shown at its field, any
 * other refusal (a name taken, an address the egress rule refuses) as the server's `detail`.
 */
import { useState } from 'preact/hooks';
import { ApiError, api, messageOf, ok } from '../lib/api';
import { Alert, Field } from '../lib/ui';
import type { Flash } from './upstream-actions';

const EMPTY = { name: '', url: '', transport: 'streamable_http' as 'streamable_http' | 'sse', auth: 'bearer' as 'bearer' | 'oauth', connection: 'shared' as 'shared' | 'per_user', bearer: '' };
/** a 422 item's last `loc` element → the field it belongs to */
const FIELD_OF: Record<string, keyof typeof EMPTY> = { name: 'name', url: 'url', transport: 'transport', value: 'bearer', credential: 'bearer', type: 'auth', client_id: 'auth', connection: 'connection' };

export function AddUpstream({ onAdded }: { onAdded: (name: string) => void }) {
  const [form, setForm] = useState(EMPTY);
  const [issues, setIssues] = useState<Partial<Record<keyof typeof EMPTY, string>>>({});
  const [flash, setFlash] = useState<Flash>(null);
  const [busy, setBusy] = useState(false);
  const set = (k: keyof typeof EMPTY) => (e: Event) => setForm({ ...form, [k]: (e.currentTarget as HTMLInputElement).value });
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setFlash(null);
    setIssues({});
    try {
      const credential =
        form.auth === 'oauth' ? { credential: { type: 'oauth' as const }, connection: form.connection } : form.bearer ? { credential: { type: 'bearer' as const, value: form.bearer } } : {};
      const u = ok(await api.POST('/upstreams', { body: { name: form.name.trim(), url: form.url.trim(), transport: form.transport, ...credential } }));
      setFlash(
        u.status === 'connected'
          ? { kind: 'ok', text: `${u.name} connected: ${u.tool_count} tools${u.quarantined_count ? `, ${u.quarantined_count} quarantined` : ''}.` }
          : u.status === 'needs_authorization'
            ? { kind: 'info', text: `${u.name} is registered: connect it (Connect on its card) to sign in at the upstream.` }
            : { kind: 'warn', text: `${u.name} is registered but not connected: ${u.status_reason ?? 'no reason given'}` },
      );
      setForm(EMPTY);
      onAdded(u.name);
    } catch (err) {
      const fields = err instanceof ApiError ? err.issues.filter((i) => FIELD_OF[String(i.loc[i.loc.length - 1])]) : [];
      if (fields.length) setIssues(Object.fromEntries(fields.map((i) => [FIELD_OF[String(i.loc[i.loc.length - 1])], i.msg])));
      else setFlash({ kind: 'error', text: messageOf(err) });
    } finally {
      setBusy(false);
    }
  };
  return (
    <details class="card add-upstream">
      <summary>Add an upstream MCP server</summary>
      <form onSubmit={submit} noValidate>
        <div class="grid fields">
          <Field id="up-name" label="Name" hint="a-z 0-9 _ -; tools are listed as <name>__<tool>" error={issues.name}>
            <input id="up-name" required value={form.name} onInput={set('name')} aria-invalid={!!issues.name} />
          </Field>
          <Field id="up-url" label="URL" error={issues.url}>
            <input id="up-url" required type="url" placeholder="https://mcp.example.com/mcp" value={form.url} onInput={set('url')} aria-invalid={!!issues.url} />
          </Field>
          <Field id="up-transport" label="Transport" error={issues.transport}>
            <select id="up-transport" value={form.transport} onChange={set('transport')}>
              <option value="streamable_http">Streamable HTTP</option>
              <option value="sse">HTTP+SSE (legacy)</option>
            </select>
          </Field>
          <Field id="up-auth" label="Authorization" error={issues.auth}>
            <select id="up-auth" value={form.auth} onChange={set('auth')}>
              <option value="bearer">None, or a bearer token</option>
              <option value="oauth">OAuth: a human signs in at the upstream</option>
            </select>
          </Field>
          {form.auth === 'oauth' ? (
            <Field id="up-connection" label="Connection" error={issues.connection}>
              <select id="up-connection" value={form.connection} onChange={set('connection')}>
                <option value="shared">One for the tenant (an admin connects)</option>
                <option value="per_user">Each human connects their own account</option>
              </select>
            </Field>
          ) : (
            <Field id="up-bearer" label="Bearer token (optional)" hint="sealed by the HSM, never shown again" error={issues.bearer}>
              <input id="up-bearer" type="password" autocomplete="off" value={form.bearer} onInput={set('bearer')} aria-invalid={!!issues.bearer} />
            </Field>
          )}
        </div>
        <button type="submit" disabled={busy}>
          {busy ? 'Connecting…' : 'Add upstream'}
        </button>
      </form>
      {flash && <Alert kind={flash.kind}>{flash.text}</Alert>}
    </details>
  );
}
