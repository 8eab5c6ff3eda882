/** Managed sessions: list, status, timeline of governed and observed calls, interrupt with a reason, compliance. */
import { useState } from 'preact/hooks';
import { api, messageOf, ok } from '../lib/api';
import { Alert, Badge, DataTable, Json, Time, useData } from '../lib/ui';
import type { Compliance, SessionRow } from '../lib/wire';

function SessionDetail({ id, onChanged }: { id: string; onChanged: () => void }) {
  const { data, error, reload } = useData(async () => {
    const [status, compliance] = await Promise.all([
      api.GET('/managed/sessions/{session_id}/status', { params: { path: { session_id: id } } }).then(ok),
      api.GET('/managed/sessions/{session_id}/compliance', { params: { path: { session_id: id } } }).then(ok),
    ]);
    return { status: status as Record<string, unknown> & { status: string }, compliance: compliance as Compliance };
  }, [id], 5000);
  const [reason, setReason] = useState('');
  const [msg, setMsg] = useState<{ kind: 'ok' | 'error'; text: string } | null>(null);
  const interrupt = async (e: Event) => {
    e.preventDefault();
    try {
      ok(await api.POST('/managed/sessions/{session_id}/interrupt', { params: { path: { session_id: id } }, body: { reason } as never }));
      setMsg({ kind: 'ok', text: 'Session interrupted.' });
      await reload();
      onChanged();
    } catch (err) {
      setMsg({ kind: 'error', text: messageOf(err) });
    }
  };
  if (error) return <Alert>{error}</Alert>;
  if (!data) return <p>Loading…</p>;
  const c = data.compliance;
  return (
    <section class="card" aria-labelledby="session-title">
      <h2 id="session-title">
        Session <code class="small">{id.slice(0, 8)}</code> <Badge value={data.status.status} />
      </h2>
      <dl class="facts wide">
        {Object.entries(c.summary).map(([k, v]) => (
          <>
            <dt>{k.replace(/_/g, ' ')}</dt>
            <dd>{typeof v === 'number' && !Number.isInteger(v) ? v.toFixed(2) : String(v)}</dd>
          </>
        ))}
      </dl>
      <h3>Timeline</h3>
      <ol class="timeline">
        {c.timeline.map((t) => (
          <li key={t.action_id}>
            <Time iso={t.requested_at} /> <code>{t.tool}</code> <Badge value={t.decision} /> <span class="muted">{t.source === 'mcp_observed' ? 'observed' : t.source === 'mcp_governed' ? 'governed' : t.source}</span>
          </li>
        ))}
      </ol>
      {data.status.status === 'active' && (
        <form onSubmit={interrupt} class="confirm">
          <label for="interrupt-reason">Reason for interrupting</label>
          <input id="interrupt-reason" required value={reason} onInput={(e) => setReason(e.currentTarget.value)} />
          <button type="submit" class="danger">
            Interrupt session
          </button>
        </form>
      )}
      {msg && <Alert kind={msg.kind}>{msg.text}</Alert>}
      <details>
        <summary>Compliance view (AGCS controls, governance profile)</summary>
        <Json value={{ governance_profile: c.governance_profile, agcs_controls: c.agcs_controls, generated_at: c.generated_at }} />
      </details>
    </section>
  );
}

export function Sessions() {
  const { data, error, reload } = useData(async () => (ok(await api.GET('/managed/sessions')) as { sessions: SessionRow[] }).sessions, [], 5000);
  const [selected, setSelected] = useState<string | null>(null);
  return (
    <section aria-labelledby="sessions-title">
      <h1 id="sessions-title">Managed sessions</h1>
      {error && <Alert>{error}</Alert>}
      {data && data.length === 0 && <p class="empty">No managed sessions yet (POST /api/managed/sessions starts one; docs/managed.md).</p>}
      <div class="split">
        {data && data.length > 0 && (
          <DataTable caption="Managed sessions" captionHidden columns={['Session', 'Status', 'Started']}>
            {data.map((s) => (
              <tr key={s.id} class={selected === s.id ? 'selected' : ''}>
                <td>
                  <button type="button" class="link" onClick={() => setSelected(s.id)}>
                    {s.id.slice(0, 8)}
                  </button>
                </td>
                <td><Badge value={s.status} /></td>
                <td><Time iso={s.created_at} /></td>
              </tr>
            ))}
          </DataTable>
        )}
        {selected && <SessionDetail id={selected} onChanged={() => void reload()} key={selected} />}
      </div>
    </section>
  );
}
