/**
 * Approvals inbox: the tenant's pending actions, newest first of the oldest 500 the gateway lists, with how many
 * wait in all and a filter by why they wait (`/approvals/<action_id>`, where an MCP
 * client sends its user to decide one call: that action alone, or how it was decided), refreshed by a short poll every 3 s
 * (docs/console.md: why not SSE), approve / reject with a note; history tab with who decided and why.
 * Parameters are shown as stored: personal data stays the vault's encrypted envelope, never decrypted.
 * A managed session's item names its session and, when the agent platform holds the call for this
 * decision (platform_confirmation), the platform's tool-use id: approving resumes the session.
 * Four eyes (docs/auth.md, "Four-eyes approvals"): an action needing several approvers shows its quorum
 * ("1 of 2 approvals") and who approved so far; the approve button says so when you started the action or
 * approved it already (neither counts again).
 */
import { useState } from 'preact/hooks';
import { api, messageOf, ok } from '../lib/api';
import { Alert, AnyOf, Badge, DataTable, Json, Tabs, Time, useData } from '../lib/ui';
import type { ApprovalItem, ApprovalReason, HistoryItem, Me } from '../lib/wire';

export const INBOX_POLL_MS = 3000;

/** Why an action waits (`queue_reason`): as its card says it, and in a few words in the inbox's filter. */
const QUEUE_REASONS: Record<ApprovalReason, { card: string; filter: string }> = {
  platform_confirmation: { card: 'the agent platform holds this call until you decide', filter: 'held by the agent platform' },
  policy: { card: 'the policy asks a human', filter: 'the policy' },
  session_config: { card: 'the managed session’s approval patterns', filter: 'session approval patterns' },
  fail_to_queue: { card: 'the policy could not be evaluated (fail_to_queue)', filter: 'policy unavailable' },
};
const REASON_FILTER = Object.entries(QUEUE_REASONS).map(([reason, text]): [string, string] => [reason, text.filter]);

/** The line above the inbox: how many wait, and when the list holds only the oldest of them. */
export function pendingSummary(shown: number, total: number, pollMs = INBOX_POLL_MS): string {
  const count = total > shown ? `${total} pending, the oldest ${shown} shown (decide them, or show one kind, to reach newer ones)` : `${total} pending`;
  return `${count} · updated automatically every ${pollMs / 1000} s`;
}

async function anomalyScores(agents: string[]): Promise<Record<string, number | null>> {
  const out: Record<string, number | null> = {};
  await Promise.all(
    agents.map(async (a) => {
      try {
        const r = ok(await api.GET('/agents/{agent_id}/anomaly_score', { params: { path: { agent_id: a } } })) as { anomaly_score: number };
        out[a] = r.anomaly_score;
      } catch {
        out[a] = null;
      }
    }),
  );
  return out;
}

/** "1 of 2 approvals" and who, for an action that needs several approvers. */
export function quorumText(i: Pick<ApprovalItem, 'required_approvers' | 'approvals'>): string {
  return `${i.approvals.length} of ${i.required_approvers} approvals`;
}

/** What the approve button says for this member: why it cannot count, or the quorum it moves. */
export function approveLabel(i: Pick<ApprovalItem, 'required_approvers' | 'approvals' | 'initiator_member_ids'>, meId: string | null | undefined): { text: string; disabled: boolean } {
  if (i.required_approvers <= 1) return { text: 'Approve', disabled: false };
  if (meId && i.initiator_member_ids.includes(meId)) return { text: 'You started this action: another member must approve', disabled: true };
  if (meId && i.approvals.some((a) => a.member_id === meId)) return { text: `You approved (${quorumText(i)})`, disabled: true };
  return { text: `Approve (${i.approvals.length + 1} of ${i.required_approvers})`, disabled: false };
}

/** The action an MCP client sent its user to (`/approvals/<action_id>`), when the path names one. */
export function focusedAction(path: string): string | null {
  const m = /^\/approvals\/([0-9a-f-]{36})\/?$/i.exec(path);
  return m ? m[1].toLowerCase() : null;
}

/** A focused action that no longer waits: how it was decided (GET /actions/{id}). */
function Decided({ actionId }: { actionId: string }) {
  const { data, error } = useData(async () => ok(await api.GET('/actions/{action_id}', { params: { path: { action_id: actionId } } })) as { status: string; tool: string; method: string; decided_at: string | null }, [actionId]);
  if (error) return <Alert>{error}</Alert>;
  if (!data) return <p class="muted">Loading…</p>;
  return (
    <Alert kind={data.status === 'approved' ? 'ok' : 'warn'}>
      <code>
        {data.tool}.{data.method}
      </code>{' '}
      (action <code class="small">{actionId}</code>) no longer waits: it is <strong>{data.status}</strong>
      {data.decided_at ? (
        <>
          , decided <Time iso={data.decided_at} />
        </>
      ) : null}
      .
    </Alert>
  );
}

function Pending({ focus, me }: { focus: string | null; me: Me | null }) {
  const [notes, setNotes] = useState<Record<string, string>>({});
  const [flash, setFlash] = useState<{ kind: 'ok' | 'error'; text: string } | null>(null);
  const [reason, setReason] = useState('');
  const { data, error, reload } = useData(
    async () => {
      // an MCP client's link names one action: that card alone, asked for by its id (however long the queue
      // is); otherwise the queue, or one kind of it
      const query = focus ? { action_id: focus } : reason ? { queue_reason: reason as ApprovalReason } : {};
      const { pending, total } = ok(await api.GET('/approvals', { params: { query } })) as { pending: ApprovalItem[]; total: number };
      const items = [...pending].sort((a, b) => b.queued_at.localeCompare(a.queued_at));
      return { items, total, scores: await anomalyScores([...new Set(items.map((i) => i.agent_id))]), at: Date.now() };
    },
    [focus, reason],
    INBOX_POLL_MS,
  );
  const decide = async (item: ApprovalItem, verdict: 'approve' | 'reject') => {
    const note = notes[item.action_id]?.trim() || undefined;
    try {
      const path = verdict === 'approve' ? '/approve/{action_id}' : '/reject/{action_id}';
      const answer = ok(await api.POST(path, { params: { path: { action_id: item.action_id } }, body: (note ? { note } : {}) as never })) as { status: string; approvals?: unknown[]; required?: number };
      setFlash({
        kind: 'ok',
        text:
          answer.status === 'pending'
            ? `${item.tool}.${item.method} (${item.action_id.slice(0, 8)}): your approval is counted, ${answer.approvals?.length ?? 0} of ${answer.required ?? item.required_approvers}; it runs once the other approvals arrive.`
            : `${item.tool}.${item.method} (${item.action_id.slice(0, 8)}) ${verdict === 'approve' ? 'approved' : 'rejected'}.`,
      });
      await reload();
    } catch (e) {
      setFlash({ kind: 'error', text: messageOf(e) });
    }
  };
  return (
    <div>
      {focus ? (
        data?.items.length !== 0 && <p class="muted">
          An MCP client waits for this decision: its call runs, with exactly these parameters, once you approve it. <a href="/approvals">All pending actions</a>
        </p>
      ) : (
        <>
          <div class="filters wide">
            <AnyOf id="f-queue-reason" label="Why queued" value={reason} options={REASON_FILTER} onChange={setReason} />
          </div>
          <p class="muted" aria-live="polite">
            {data ? pendingSummary(data.items.length, data.total) : 'Loading…'}
          </p>
        </>
      )}
      {flash && <Alert kind={flash.kind}>{flash.text}</Alert>}
      {error && <Alert>{error}</Alert>}
      {data && data.items.length === 0 && (focus ? <Decided actionId={focus} /> : <p class="empty">Nothing waits for a decision.</p>)}
      <ul class="cards" aria-label="Pending actions">
        {data?.items.map((i) => (
          <li key={i.action_id} class="card approval" data-action-id={i.action_id}>
            <div class="row between">
              <h3>
                <code>
                  {i.tool}.{i.method}
                </code>
              </h3>
              <Badge value={i.opa_result?.severity ?? 'none'} />
            </div>
            <dl class="facts">
              <dt>Agent</dt>
              <dd>{i.agent_id}</dd>
              <dt>Waiting</dt>
              <dd>
                <Time iso={i.queued_at} />
              </dd>
              <dt>Anomaly score</dt>
              <dd>{data.scores[i.agent_id] == null ? '—' : data.scores[i.agent_id]!.toFixed(2)}</dd>
              <dt>Violations</dt>
              <dd>{i.opa_result?.violations?.length ? i.opa_result.violations.join(', ') : 'none'}</dd>
              {i.queue_reason && (
                <>
                  <dt>Why queued</dt>
                  <dd>{QUEUE_REASONS[i.queue_reason as ApprovalReason]?.card ?? i.queue_reason}</dd>
                </>
              )}
              {i.session_id && (
                <>
                  <dt>Managed session</dt>
                  <dd>
                    <code class="small">{i.session_id}</code>
                    {i.platform_tool_use_id && (
                      <>
                        {' '}
                        · platform tool use <code class="small">{i.platform_tool_use_id}</code>
                      </>
                    )}
                  </dd>
                </>
              )}
              {i.required_approvers > 1 && (
                <>
                  <dt>Four eyes</dt>
                  <dd class="quorum">
                    <strong>{quorumText(i)}</strong>
                    {i.approvals.length > 0 && <> · approved by {i.approvals.map((a) => a.email).join(', ')}</>}
                  </dd>
                </>
              )}
              <dt>Action</dt>
              <dd>
                <code class="small">{i.action_id}</code>
              </dd>
            </dl>
            <details open>
              <summary>Parameters</summary>
              <Json value={i.params} label="Parameters (personal data stays encrypted)" />
            </details>
            <label for={`note-${i.action_id}`}>Note (optional)</label>
            <textarea id={`note-${i.action_id}`} rows={2} value={notes[i.action_id] ?? ''} onInput={(e) => setNotes({ ...notes, [i.action_id]: e.currentTarget.value })} />
            <div class="row">
              {(() => {
                const label = approveLabel(i, me?.user_id);
                return (
                  <button type="button" disabled={label.disabled} onClick={() => decide(i, 'approve')}>
                    {label.text}
                  </button>
                );
              })()}
              <button type="button" class="danger" onClick={() => decide(i, 'reject')}>
                Reject
              </button>
            </div>
          </li>
        ))}
      </ul>
    </div>
  );
}

function History() {
  const { data, error } = useData(async () => (ok(await api.GET('/approvals/history')) as { history: HistoryItem[] }).history, [], INBOX_POLL_MS * 2);
  return (
    <div>
      {error && <Alert>{error}</Alert>}
      {data && data.length === 0 && <p class="empty">No decisions yet.</p>}
      {data && data.length > 0 && (
        <DataTable caption="Decided actions" captionHidden columns={['Action', 'Agent', 'Decision', 'By', 'When', 'Note']} stacked>
          {data.map((h) => (
            <tr key={h.action_id} data-action-id={h.action_id}>
              <td data-label="Action">
                <code>
                  {h.tool}.{h.method}
                </code>
              </td>
              <td data-label="Agent">{h.agent_id}</td>
              <td data-label="Decision">
                <Badge value={h.status} />
              </td>
              <td data-label="By">{h.required_approvers > 1 && h.approvals.length ? `${h.approvals.map((a) => a.email).join(', ')} (${quorumText(h)})` : (h.decided_by ?? '—')}</td>
              <td data-label="When">
                <Time iso={h.decided_at} />
              </td>
              <td data-label="Note" class="note">{h.note ?? ''}</td>
            </tr>
          ))}
        </DataTable>
      )}
    </div>
  );
}

export function Approvals({ me }: { me: Me | null }) {
  const [tab, setTab] = useState(location.search.includes('tab=history') ? 'history' : 'pending');
  const focus = focusedAction(location.pathname);
  return (
    <section aria-labelledby="approvals-title">
      <h1 id="approvals-title">Approvals</h1>
      <Tabs
        tabs={[
          { id: 'pending', label: 'Pending' },
          { id: 'history', label: 'History' },
        ]}
        value={tab}
        onChange={setTab}
      />
      <div role="tabpanel" aria-labelledby={`tab-${tab}`}>
        {tab === 'pending' ? <Pending focus={focus} me={me} /> : <History />}
      </div>
    </section>
  );
}
