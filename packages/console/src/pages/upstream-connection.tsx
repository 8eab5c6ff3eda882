/**
 * The authorization of an upstream that needs OAuth (docs/federation.md, "Upstreams that need OAuth"):
 * whether it is connected, who is (owners and admins see every human's connection, a member their own),
 * and Connect / Disconnect. Connect asks the gateway for the authorization URL (the answer sets the
 * binding cookie in this browser) and opens it here: the human signs in at the upstream and comes back to
 * this page. No token ever reaches the console.
 */
import { useState } from 'preact/hooks';
import { api, messageOf, ok } from '../lib/api';
import { Alert, Time } from '../lib/ui';
import type { Upstream } from '../lib/wire';
import type { Flash } from './upstream-actions';

interface Props {
  upstream: Upstream;
  onChanged: () => void;
}

export function UpstreamConnection({ upstream, onChanged }: Props) {
  const a = upstream.authorization;
  const [busy, setBusy] = useState(false);
  const [flash, setFlash] = useState<Flash>(null);
  if (!a) return null;
  const name = upstream.name;
  const perUser = upstream.connection === 'per_user';
  const connect = async () => {
    setBusy(true);
    setFlash(null);
    try {
      const r = ok(await api.POST('/upstreams/{name}/connect', { params: { path: { name } } }));
      window.location.assign(r.authorization_url);
    } catch (err) {
      setFlash({ kind: 'error', text: messageOf(err) });
      setBusy(false);
    }
  };
  const disconnect = async () => {
    setBusy(true);
    setFlash(null);
    try {
      ok(await api.DELETE('/upstreams/{name}/connection', { params: { path: { name } } }));
      setFlash({ kind: 'ok', text: `${perUser ? 'Your connection to' : 'The connection of'} ${name} is removed (revoked at the upstream where it offers revocation).` });
      onChanged();
    } catch (err) {
      setFlash({ kind: 'error', text: messageOf(err) });
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="card upstream-connection" data-testid="upstream-connection">
      <div class="row between">
        <h3>
          Authorization (OAuth, {perUser ? 'each human connects their own account' : 'one connection for the tenant'})
        </h3>
        <span class="actions">
          {a.connected ? (
            <button type="button" class="secondary" disabled={busy} onClick={disconnect} aria-label={`Disconnect ${name}`}>
              Disconnect
            </button>
          ) : (
            <button type="button" disabled={busy} onClick={connect} aria-label={`Connect ${name}`}>
              {busy ? 'Opening…' : 'Connect'}
            </button>
          )}
        </span>
      </div>
      <p>
        {a.connected ? (perUser ? 'You are connected.' : 'Connected.') : perUser ? 'You are not connected: your agents cannot use this upstream until you connect.' : 'Not connected: a human connects it.'}{' '}
        <span class="muted">
          Authorization server <code>{a.server}</code>, the gateway identified by {a.client_registration === 'metadata_document' ? 'its client metadata document' : a.client_registration === 'dynamic' ? 'dynamic registration' : 'a pre-registered client'}.
        </span>
      </p>
      {a.connections.length > 0 && (
        <table class="stacked" aria-label="Connections">
          <thead>
            <tr>
              <th>Human</th>
              <th>Connected</th>
              <th>Token until</th>
            </tr>
          </thead>
          <tbody>
            {a.connections.map((c) => (
              <tr key={c.user_id ?? 'shared'}>
                <td>{c.user_id ?? `the tenant (by ${c.connected_by ?? '—'})`}</td>
                <td>
                  <Time iso={c.connected_at} />
                </td>
                <td>{c.expires_at ? new Date(c.expires_at).toLocaleString() : '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {flash && <Alert kind={flash.kind}>{flash.text}</Alert>}
    </div>
  );
}
