/**
 * Consent for an MCP client (docs/auth.md, "MCP clients: OAuth"): the client's name and where the browser
 * goes back to, the agent identity it will act as (the agent_id of its audit records) and the scopes. It
 * acts as an agent-scoped key of this tenant: it can call governed tools, never approve. Approve or deny
 * sends the browser back to the client, only to an http(s) or private-use redirect (lib/redirects.ts). A
 * dynamically registered client is marked unverified (its name is its own claim), and a redirect host
 * that is empty or differs from a metadata document's host is warned about.
 */
import { useState } from 'preact/hooks';
import { api, messageOf, ok } from '../lib/api';
import { clientIdHost, navigableRedirect } from '../lib/redirects';
import { Alert, Field, useData } from '../lib/ui';

/** An agent identity proposed from the client's name: letters, digits, . _ - */
export const agentNameFrom = (clientName: string | null) =>
  (clientName ?? 'mcp-client')
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 64) || 'mcp-client';

export function OauthConsent({ id }: { id: string }) {
  const { data, error } = useData(async () => ok(await api.GET('/oauth/requests/{id}', { params: { path: { id } } })), [id]);
  const [agentName, setAgentName] = useState<string | null>(null);
  const [scopes, setScopes] = useState<string[] | null>(null);
  const [msg, setMsg] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [notFollowed, setNotFollowed] = useState<string | null>(null);
  const decide = async (approve: boolean) => {
    if (!data) return;
    setBusy(true);
    try {
      const body = approve ? { approve, agent_name: agentName ?? agentNameFrom(data.client_name), scopes: (scopes ?? data.scopes) as 'mcp:tools'[] } : { approve };
      const r = ok(await api.POST('/oauth/requests/{id}/decision', { params: { path: { id } }, body }));
      const to = navigableRedirect(r.redirect_to);
      if (to) location.assign(to);
      else setNotFollowed(r.redirect_to);
    } catch (e) {
      setMsg(messageOf(e));
      setBusy(false);
    }
  };
  if (error) return <Alert>{error}</Alert>;
  if (!data) return <p>Loading…</p>;
  const chosen = scopes ?? data.scopes;
  const documentHost = clientIdHost(data.client_id);
  const redirectElsewhere = !data.redirect_host || (documentHost !== null && documentHost !== data.redirect_host);
  if (notFollowed !== null) {
    return (
      <section class="card narrow" data-testid="oauth-consent-done">
        <h1>Decision saved</h1>
        <Alert>
          The client’s redirect address is not one this page opens (only https, http and app schemes such as com.example.app: are): <code>{notFollowed}</code>
        </Alert>
      </section>
    );
  }
  return (
    <section class="card narrow" aria-labelledby="consent-title" data-testid="oauth-consent">
      <h1 id="consent-title">Connect an MCP client</h1>
      <p>
        <strong>{data.client_name ?? data.client_id}</strong> asks to use this tenant’s governed tools through the MCP server. After you decide, your browser goes back to{' '}
        <code>{data.redirect_host}</code>.
      </p>
      {!data.client_verified && (
        <Alert kind="warn">
          <span data-testid="client-unverified">Unverified client:</span> it registered itself, so its name is only its own claim. Approve only a client you just started
          yourself.
        </Alert>
      )}
      {redirectElsewhere && (
        <Alert kind="warn">
          <span data-testid="redirect-warning">Check where you go back to:</span> {data.redirect_host ? <code>{data.redirect_host}</code> : 'an address without a host'}
          {documentHost ? <> is not the host of the client’s metadata document, <code>{documentHost}</code>.</> : '.'}
        </Alert>
      )}
      <dl class="facts">
        <dt>Client</dt>
        <dd>
          {data.client_name ?? '—'} <code class="small">{data.client_id}</code>
        </dd>
        {data.client_uri && (
          <>
            <dt>Site</dt>
            <dd>{data.client_uri}</dd>
          </>
        )}
        <dt>Resource</dt>
        <dd>
          <code>{data.resource}</code>
        </dd>
        <dt>Decide within</dt>
        <dd>
          <time datetime={data.expires_at} title={data.expires_at}>
            {Math.max(0, Math.round((Date.parse(data.expires_at) - Date.now()) / 60_000))} min
          </time>
        </dd>
      </dl>
      <Field id="agent-name" label="Agent identity" hint="the agent_id of every audit record of this client’s calls">
        <input id="agent-name" value={agentName ?? agentNameFrom(data.client_name)} pattern="[A-Za-z0-9._-]{1,64}" onInput={(e) => setAgentName(e.currentTarget.value)} />
      </Field>
      <fieldset>
        <legend>Scopes</legend>
        {data.scopes.map((s) => (
          <label class="check" key={s}>
            <input type="checkbox" checked={chosen.includes(s)} onChange={(e) => setScopes(e.currentTarget.checked ? [...chosen, s] : chosen.filter((x) => x !== s))} />
            {s === 'mcp:tools' ? 'mcp:tools: list and call governed tools (every call policy-checked and audited)' : s}
          </label>
        ))}
        <p class="hint">An MCP client acts as an agent: it never approves actions.</p>
      </fieldset>
      {msg && <Alert>{msg}</Alert>}
      <div class="row">
        <button type="button" disabled={busy || chosen.length === 0} onClick={() => void decide(true)}>
          Approve
        </button>
        <button type="button" class="secondary" disabled={busy} onClick={() => void decide(false)}>
          Deny
        </button>
      </div>
    </section>
  );
}
