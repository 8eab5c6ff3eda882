/**
 * Refresh and Remove of one upstream, in its row of the list and in its detail card. Remove asks first
 * (an inline confirmation, as revoking a key does in Settings): the upstream's tools leave every MCP client.
 */
import { useState } from 'preact/hooks';
import { api, messageOf, ok } from '../lib/api';

export type Flash = { kind: 'ok' | 'error' | 'warn' | 'info'; text: string } | null;

interface Props {
  name: string;
  /** what happened, for the caller's alert */
  onResult: (flash: Flash) => void;
  /** the catalog changed (refreshed or removed): reload what shows it */
  onChanged: (removed: boolean) => void;
}

export function UpstreamActions({ name, onResult, onChanged }: Props) {
  const [busy, setBusy] = useState<'refresh' | 'remove' | null>(null);
  const [confirming, setConfirming] = useState(false);
  const refresh = async () => {
    setBusy('refresh');
    try {
      const u = ok(await api.POST('/upstreams/{name}/refresh', { params: { path: { name } } }));
      onResult(
        u.status === 'connected'
          ? { kind: u.quarantined_count > 0 ? 'warn' : 'ok', text: `${name} read again: ${u.tool_count} active, ${u.quarantined_count} quarantined.` }
          : { kind: 'error', text: `${name} is not connected: ${u.status_reason ?? 'no reason given'}` },
      );
      onChanged(false);
    } catch (err) {
      onResult({ kind: 'error', text: messageOf(err) });
    } finally {
      setBusy(null);
    }
  };
  const remove = async () => {
    setBusy('remove');
    try {
      ok(await api.DELETE('/upstreams/{name}', { params: { path: { name } } }));
      onResult({ kind: 'ok', text: `${name} removed: its tools are no longer listed and its credential is deleted.` });
      onChanged(true);
    } catch (err) {
      onResult({ kind: 'error', text: messageOf(err) });
    } finally {
      setBusy(null);
      setConfirming(false);
    }
  };
  if (confirming)
    return (
      <span class="confirm" role="group" aria-label={`Confirm removing ${name}`}>
        <button type="button" class="danger" disabled={busy !== null} onClick={remove}>
          Remove now
        </button>
        <button type="button" class="secondary" onClick={() => setConfirming(false)}>
          Cancel
        </button>
      </span>
    );
  return (
    <span class="actions">
      <button type="button" class="secondary" aria-label={`Refresh ${name}`} disabled={busy !== null} onClick={refresh}>
        {busy === 'refresh' ? 'Reading…' : 'Refresh'}
      </button>
      <button type="button" class="secondary" aria-label={`Remove ${name}…`} onClick={() => setConfirming(true)}>
        Remove…
      </button>
    </span>
  );
}
