/** Settings: API key (prefix, rotation), agent keys, webhook URL and events, delivery log, rate limits, failure mode, public report, single sign-on. */
import { useEffect, useState } from 'preact/hooks';
import { ApiError, api, messageOf, ok } from '../lib/api';
import { Alert, Badge, ConfirmAction, DataTable, Field, ShownOnce, Time, useData } from '../lib/ui';
import type { ApiKeyInfo, Delivery, Settings } from '../lib/wire';
import { SsoSettings } from './sso-settings';

const EVENTS = ['action.allowed', 'action.denied', 'action.pending', 'action.pending_approval', 'anomaly.detected', 'session.interrupted'];
const MODES = ['fail-closed', 'fail-open', 'fail_to_queue'];

function ApiKey({ prefix, onRotated }: { prefix: string | null; onRotated: () => void }) {
  const [key, setKey] = useState<string | null>(null);
  const [confirming, setConfirming] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const rotate = async () => {
    setError(null);
    try {
      const r = ok(await api.POST('/api-keys/rotate')) as { api_key: string };
      setKey(r.api_key);
      setConfirming(false);
      onRotated();
    } catch (e) {
      setError(messageOf(e));
    }
  };
  return (
    <section class="card" aria-labelledby="key-title">
      <h2 id="key-title">API key</h2>
      <p>
        Active key: <code data-testid="key-prefix">{prefix ? `${prefix}…` : 'none'}</code>
      </p>
      {key && <ShownOnce label="New API key" value={key} />}
      {error && <Alert>{error}</Alert>}
      {!confirming ? (
        <button type="button" class="secondary" onClick={() => setConfirming(true)}>
          Rotate key…
        </button>
      ) : (
        <div class="confirm" role="group" aria-label="Confirm rotation">
          <p>The current key stops working at once, for every agent that uses it.</p>
          <button type="button" class="danger" onClick={rotate}>
            Rotate now
          </button>
          <button type="button" class="secondary" onClick={() => setConfirming(false)}>
            Cancel
          </button>
        </div>
      )}
    </section>
  );
}

/**
 * Agent-scoped keys (docs/auth.md, "Scoped keys"): one per agent, each able to call tools, the MCP server
 * and read its own actions only, so an agent can never approve its own escalated call. Issued here (the key
 * is shown once), listed by prefix, revoked at once.
 */
function AgentKeys() {
  const { data, error, reload } = useData(async () => (ok(await api.GET('/api-keys')) as { keys: ApiKeyInfo[] }).keys);
  const [name, setName] = useState('');
  const [issue, setIssue] = useState<string | undefined>(undefined);
  const [issued, setIssued] = useState<{ name: string; key: string } | null>(null);
  const [revoking, setRevoking] = useState<string | null>(null);
  const [msg, setMsg] = useState<{ kind: 'ok' | 'error'; text: string } | null>(null);
  const create = async (e: Event) => {
    e.preventDefault();
    setIssue(undefined);
    setMsg(null);
    try {
      const k = ok(await api.POST('/api-keys', { body: { scope: 'agent', name: name.trim() } })) as ApiKeyInfo & { api_key: string };
      setIssued({ name: k.name ?? '', key: k.api_key });
      setName('');
      await reload();
    } catch (err) {
      if (err instanceof ApiError && err.issues.length) setIssue(err.issues[0].msg);
      else setMsg({ kind: 'error', text: messageOf(err) });
    }
  };
  const revoke = async (k: ApiKeyInfo) => {
    setMsg(null);
    try {
      ok(await api.DELETE('/api-keys/{id}', { params: { path: { id: k.id } } }));
      setRevoking(null);
      setMsg({ kind: 'ok', text: `Key ${k.key_prefix}… (${k.name ?? 'unnamed'}) is revoked; it stops working at once.` });
      await reload();
    } catch (err) {
      setMsg({ kind: 'error', text: messageOf(err) });
    }
  };
  const agents = (data ?? []).filter((k) => k.scope === 'agent');
  return (
    <section class="card" aria-labelledby="agent-keys-title">
      <h2 id="agent-keys-title">Agent keys</h2>
      <p class="muted">Give each agent its own key: it may call tools and the MCP server and read its own actions, never approve, read the audit log or change settings.</p>
      <form class="row bottom wrap" onSubmit={create} noValidate>
        <Field id="agent_key_name" label="Agent name" error={issue}>
          <input id="agent_key_name" value={name} onInput={(e) => setName(e.currentTarget.value)} aria-invalid={!!issue} />
        </Field>
        <button type="submit">Issue agent key</button>
      </form>
      {issued && <ShownOnce label={`Agent key for ${issued.name}`} value={issued.key} />}
      {msg && <Alert kind={msg.kind}>{msg.text}</Alert>}
      {error && <Alert>{error}</Alert>}
      {data && !agents.length && <p>No agent keys yet.</p>}
      {agents.length > 0 && (
        <DataTable caption="Active agent keys" columns={['Agent', 'Key', 'Issued by', 'Issued']} actions>
          {agents.map((k) => (
            <tr key={k.id}>
              <th scope="row">{k.name ?? '—'}</th>
              <td>
                <code>{k.key_prefix}…</code>
              </td>
              <td>{k.created_by ?? '—'}</td>
              <td>
                <Time iso={k.created_at} />
              </td>
              <td>
                <ConfirmAction
                  open={revoking === k.id}
                  verb="Revoke"
                  openLabel={`Revoke the key of ${k.name ?? k.key_prefix}`}
                  confirmLabel={`Confirm revoking ${k.name ?? k.key_prefix}`}
                  onOpen={() => setRevoking(k.id)}
                  onCancel={() => setRevoking(null)}
                  onConfirm={() => void revoke(k)}
                />
              </td>
            </tr>
          ))}
        </DataTable>
      )}
    </section>
  );
}

function Deliveries() {
  const [status, setStatus] = useState('');
  const { data, error, reload } = useData(
    async () => (ok(await api.GET('/webhooks/deliveries', { params: { query: { limit: 50, ...(status ? { status } : {}) } as never } })) as { deliveries: Delivery[] }).deliveries,
    [status],
  );
  const [testError, setTestError] = useState<string | null>(null);
  const test = async () => {
    setTestError(null);
    try {
      ok(await api.POST('/webhooks/test', { body: { event: 'webhook.test' } as never }));
    } catch (e) {
      setTestError(messageOf(e)); // e.g. no webhook URL yet; a failed attempt also shows in the log
    }
    await reload();
  };
  return (
    <section class="card" aria-labelledby="deliveries-title">
      <h2 id="deliveries-title">Webhook deliveries</h2>
      <div class="row wrap bottom">
        <Field id="d-status" label="Status">
          <select id="d-status" value={status} onChange={(e) => setStatus(e.currentTarget.value)}>
            <option value="">all</option>
            <option value="failed">failed</option>
            <option value="pending">pending</option>
            <option value="delivered">delivered</option>
          </select>
        </Field>
        <button type="button" class="secondary" onClick={test}>
          Send a test event
        </button>
      </div>
      {testError && <Alert kind="warn">{testError}</Alert>}
      {error && <Alert>{error}</Alert>}
      {data && data.length === 0 && <p class="empty">No deliveries.</p>}
      {data && data.length > 0 && (
        <DataTable caption="Webhook deliveries, newest first" captionHidden columns={['Event', 'Status', 'Attempts', 'Last answer', 'Created']}>
          {data.map((d) => (
            <tr key={d.delivery_id}>
              <td>{d.event}{d.test ? ' (test)' : ''}</td>
              <td><Badge value={d.status} /></td>
              <td>{d.attempts}</td>
              <td>{d.last_status_code ?? ''} {d.last_error ?? ''}</td>
              <td><Time iso={d.created_at} /></td>
            </tr>
          ))}
        </DataTable>
      )}
    </section>
  );
}

/** Opt in to (or out of) the tenant's public report; aggregates only (docs/public-dashboard.md). */
function PublicReportSettings({ current, onSaved }: { current: Settings['public_dashboard']; onSaved: (s: Settings) => void }) {
  const [enabled, setEnabled] = useState(current.enabled);
  const [slug, setSlug] = useState(current.slug ?? '');
  const [issue, setIssue] = useState<string | undefined>(undefined);
  const [msg, setMsg] = useState<{ kind: 'ok' | 'error'; text: string } | null>(null);
  useEffect(() => {
    setEnabled(current.enabled);
    setSlug(current.slug ?? '');
  }, [current.enabled, current.slug]);
  const save = async (e: Event) => {
    e.preventDefault();
    setMsg(null);
    setIssue(undefined);
    const body = { public_dashboard: { enabled, ...(slug.trim() ? { slug: slug.trim() } : {}) } };
    try {
      const s = ok(await api.PATCH('/dashboard/settings', { body: body as never })) as Settings;
      onSaved(s);
      setMsg({ kind: 'ok', text: s.public_dashboard.enabled ? 'Your public report is published.' : 'Your public report is not published.' });
    } catch (err) {
      if (err instanceof ApiError && (err.issues.length || err.status === 409)) {
        setIssue(err.issues[0]?.msg ?? messageOf(err));
        setMsg({ kind: 'error', text: 'The address was refused; see the field.' });
      } else setMsg({ kind: 'error', text: messageOf(err) });
    }
  };
  return (
    <form class="card" onSubmit={save} noValidate aria-labelledby="public-report-title">
      <h2 id="public-report-title">Public report</h2>
      <p class="muted">
        Anyone may read it without signing in: decision counts, the chain's status, the latest signed tree head and anchor, and the name of your policy template. Never parameters, agent ids or
        personal data.
      </p>
      <label class="check">
        <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.currentTarget.checked)} /> Publish my public report
      </label>
      <Field id="public_slug" label="Address (slug)" error={issue} hint="Lower-case letters, digits and dashes; left empty, your tenant's slug is used.">
        <input id="public_slug" value={slug} onInput={(e) => setSlug(e.currentTarget.value)} aria-invalid={!!issue} />
      </Field>
      {current.enabled && current.slug && (
        <p>
          Published at <a href={`/public/${current.slug}`}>/public/{current.slug}</a>
        </p>
      )}
      {msg && <Alert kind={msg.kind}>{msg.text}</Alert>}
      <button type="submit">Save public report</button>
    </form>
  );
}

export function SettingsPage() {
  const { data, error, reload, setData } = useData(async () => ok(await api.GET('/dashboard/settings')) as Settings);
  const [form, setForm] = useState({ webhook_url: '', webhook_events: [] as string[], rate_limit_rps: '', rate_limit_burst: '', mode: 'fail-closed' });
  const [issues, setIssues] = useState<Record<string, string>>({});
  const [msg, setMsg] = useState<{ kind: 'ok' | 'error'; text: string } | null>(null);
  const [secret, setSecret] = useState<string | null>(null);
  useEffect(() => {
    if (data)
      setForm({ webhook_url: data.webhook_url ?? '', webhook_events: data.webhook_events, rate_limit_rps: String(data.rate_limit_rps), rate_limit_burst: String(data.rate_limit_burst), mode: data.failure_config.mode });
  }, [data]);
  if (error) return <Alert>{error}</Alert>;
  if (!data) return <p>Loading…</p>;
  const num = (s: string) => (/^-?\d+(\.\d+)?$/.test(s.trim()) ? Number(s) : s);
  const save = async (e: Event) => {
    e.preventDefault();
    setMsg(null);
    setIssues({});
    const body: Record<string, unknown> = {
      webhook_url: form.webhook_url.trim() || null,
      webhook_events: form.webhook_events,
      rate_limit_rps: num(form.rate_limit_rps),
      rate_limit_burst: num(form.rate_limit_burst),
      failure_config: { mode: form.mode },
    };
    try {
      const s = ok(await api.PATCH('/dashboard/settings', { body: body as never })) as Settings;
      if (s.webhook_secret) setSecret(s.webhook_secret);
      setData({ ...data, ...s });
      setMsg({ kind: 'ok', text: 'Settings saved.' });
    } catch (err) {
      if (err instanceof ApiError && err.issues.length) {
        setIssues(Object.fromEntries(err.issues.map((i) => [String(i.loc[1] ?? ''), i.msg])));
        setMsg({ kind: 'error', text: 'Some values were refused; see the fields.' });
      } else setMsg({ kind: 'error', text: messageOf(err) });
    }
  };
  const toggle = (ev: string) => setForm({ ...form, webhook_events: form.webhook_events.includes(ev) ? form.webhook_events.filter((x) => x !== ev) : [...form.webhook_events, ev] });
  return (
    <section aria-labelledby="settings-title">
      <h1 id="settings-title">Settings</h1>
      <ApiKey prefix={data.api_key_prefix ?? null} onRotated={() => void reload()} />
      <AgentKeys />
      <form class="card" onSubmit={save} noValidate aria-labelledby="tenant-settings-title">
        <h2 id="tenant-settings-title">Webhooks, limits and failure mode</h2>
        <Field id="webhook_url" label="Webhook URL (HTTPS)" error={issues.webhook_url} hint="Signed events are POSTed here; private and loopback targets are refused.">
          <input id="webhook_url" type="url" value={form.webhook_url} onInput={(e) => setForm({ ...form, webhook_url: e.currentTarget.value })} aria-invalid={!!issues.webhook_url} />
        </Field>
        {secret && <ShownOnce label="Webhook signing secret" value={secret} />}
        <fieldset>
          <legend>Webhook events</legend>
          {EVENTS.map((ev) => (
            <label key={ev} class="check">
              <input type="checkbox" checked={form.webhook_events.includes(ev)} onChange={() => toggle(ev)} /> {ev}
            </label>
          ))}
          {issues.webhook_events && <p class="field-error">{issues.webhook_events}</p>}
        </fieldset>
        <div class="grid">
          <Field id="rate_limit_rps" label="Rate limit (calls per second)" error={issues.rate_limit_rps}>
            <input id="rate_limit_rps" inputMode="numeric" value={form.rate_limit_rps} onInput={(e) => setForm({ ...form, rate_limit_rps: e.currentTarget.value })} aria-invalid={!!issues.rate_limit_rps} />
          </Field>
          <Field id="rate_limit_burst" label="Burst" error={issues.rate_limit_burst}>
            <input id="rate_limit_burst" inputMode="numeric" value={form.rate_limit_burst} onInput={(e) => setForm({ ...form, rate_limit_burst: e.currentTarget.value })} aria-invalid={!!issues.rate_limit_burst} />
          </Field>
          <Field id="mode" label="When the policy engine is unreachable" error={issues.failure_config}>
            <select id="mode" value={form.mode} onChange={(e) => setForm({ ...form, mode: e.currentTarget.value })}>
              {MODES.map((m) => (
                <option key={m}>{m}</option>
              ))}
            </select>
          </Field>
        </div>
        {msg && <Alert kind={msg.kind}>{msg.text}</Alert>}
        <button type="submit">Save settings</button>
      </form>
      <PublicReportSettings current={data.public_dashboard} onSaved={(s) => setData({ ...data, ...s })} />
      <SsoSettings />
      <Deliveries />
    </section>
  );
}
