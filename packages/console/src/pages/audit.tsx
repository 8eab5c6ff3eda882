/**
 * Audit explorer: the log with filters, a record's detail, "verify chain", and the record's inclusion
 * proof verified here with WebCrypto (lib/merkle.ts) up to its tree head and the anchored root. The member
 * filter asks the gateway (GET /api/audit/log?member=<id>: the records naming that member as the one who
 * acted or as an approver), chosen from the tenant's members (GET /api/members), or typed as an id when the
 * member list cannot be read.
 */
import { useMemo, useState } from 'preact/hooks';
import { ApiError, api, messageOf, ok } from '../lib/api';
import { type Step, verifyEvidence } from '../lib/merkle';
import { Alert, AnyOf, Badge, DataTable, Field, Json, Time, useData } from '../lib/ui';
import type { AnchorStatus, AuditRecord, ChainVerify, InclusionProof, Me, TreeHead } from '../lib/wire';

interface Filters {
  agent: string;
  tool: string;
  decision: string;
  source: string;
  from: string;
  to: string;
}
const EMPTY: Filters = { agent: '', tool: '', decision: '', source: '', from: '', to: '' };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The member filter: a select of the tenant's members, or an id field when they cannot be listed. */
function MemberFilter({ value, onChange }: { value: string; onChange: (id: string) => void }) {
  const members = useData(async () => ok(await api.GET('/members')).members, []);
  const [typed, setTyped] = useState(value);
  if (members.data) {
    return <AnyOf id="f-member" label="Member" value={value} options={members.data.map((m) => [m.id, `${m.email} (${m.role})`])} onChange={onChange} />;
  }
  if (!members.error) return null;
  const bad = typed !== '' && !UUID.test(typed.trim());
  return (
    <Field id="f-member" label="Member id" error={bad ? 'A member id is a UUID (as the Members page lists them).' : undefined}>
      <input
        id="f-member"
        value={typed}
        aria-invalid={bad}
        placeholder="member id"
        onInput={(e) => setTyped(e.currentTarget.value)}
        onChange={(e) => {
          const v = e.currentTarget.value.trim();
          if (v === '' || UUID.test(v)) onChange(v.toLowerCase());
        }}
      />
    </Field>
  );
}

function matches(r: AuditRecord, f: Filters): boolean {
  if (f.agent && !r.agent_id.includes(f.agent)) return false;
  if (f.tool && !`${r.tool}.${r.method}`.includes(f.tool)) return false;
  if (f.decision && r.decision !== f.decision) return false;
  if (f.source && r.source !== f.source) return false;
  if (f.from && r.requested_at < new Date(f.from).toISOString()) return false;
  if (f.to && r.requested_at > new Date(f.to).toISOString()) return false;
  return true;
}

function Evidence({ record, me }: { record: AuditRecord; me: Me | null }) {
  const [state, setState] = useState<{ ok: boolean; steps: Step[]; proof: InclusionProof; anchor: AnchorStatus['last_anchor'] } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const run = async () => {
    setBusy(true);
    setError(null);
    setState(null);
    try {
      const anchor = (ok(await api.GET('/anchor/status')) as AnchorStatus).last_anchor;
      const { trees } = ok(await api.GET('/audit/merkle/roots')) as { trees: TreeHead[] };
      // prove against the anchored head when it holds the record (409 when it does not), else the latest head
      const proveAt = async (treeIndex?: number) =>
        ok(await api.GET('/audit/merkle/proof/{record_hash}', { params: { path: { record_hash: record.record_hash }, query: treeIndex === undefined ? {} : { tree_index: treeIndex } } })) as InclusionProof;
      let proof: InclusionProof;
      try {
        proof = await proveAt(anchor ? anchor.tree_index : undefined);
      } catch (e) {
        if (!(anchor && e instanceof ApiError && e.status === 409)) throw e;
        proof = await proveAt();
      }
      const head = trees.find((t) => t.tree_index === proof.tree_index);
      const result = await verifyEvidence({
        proof,
        headRoot: head?.merkle_root ?? null,
        anchor: anchor && me && anchor.tree_index === proof.tree_index ? { ...anchor, tenantId: me.tenant_id } : null,
      });
      setState({ ...result, proof, anchor: anchor && anchor.tree_index === proof.tree_index ? anchor : null });
    } catch (e) {
      setError(e instanceof ApiError && e.status === 409 ? 'This record is not in a tree head yet (heads are built hourly, or with "Build and anchor now").' : messageOf(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="evidence">
      <button type="button" onClick={run} disabled={busy}>
        {busy ? 'Verifying…' : 'Verify inclusion proof in this browser'}
      </button>
      {error && <Alert kind="warn">{error}</Alert>}
      {state && (
        <div data-testid="proof-result">
          <Alert kind={state.ok ? 'ok' : 'error'}>
            {state.ok ? 'Inclusion proof VERIFIED in the browser' : 'Inclusion proof FAILED in the browser'} — leaf #{state.proof.leaf_index} of tree head #{state.proof.tree_index} ({state.proof.tree_size} records)
            {state.anchor ? ', anchored on chain' : ', tree head not anchored yet'}.
          </Alert>
          <ol class="steps">
            {state.steps.map((s) => (
              <li key={s.label} class={s.ok ? 'step-ok' : 'step-fail'}>
                <span aria-hidden="true">{s.ok ? '✔' : '✘'}</span> <strong>{s.label}</strong>
                <br />
                <code class="small">{s.detail}</code>
              </li>
            ))}
          </ol>
          {state.anchor && (
            <p>
              Transaction <code class="small">{state.anchor.tx_hash}</code> in block {state.anchor.block_number} on {state.anchor.network}
              {state.anchor.explorer_tx_url ? (
                <>
                  {' '}
                  — <a href={state.anchor.explorer_tx_url} rel="noopener noreferrer" target="_blank">view on the explorer</a>
                </>
              ) : (
                ' (a local chain: no public explorer)'
              )}
              .
            </p>
          )}
          <p class="muted small">The server also said verified={String(state.proof.verified)}; the result above does not depend on it.</p>
        </div>
      )}
    </div>
  );
}

function Detail({ record, me }: { record: AuditRecord; me: Me | null }) {
  return (
    <section class="card" aria-labelledby="detail-title" data-testid="record-detail">
      <h2 id="detail-title">
        Record #{record.id}: <code>{record.tool}.{record.method}</code> <Badge value={record.decision} />
      </h2>
      <dl class="facts wide">
        <dt>Action</dt>
        <dd><code class="small">{record.action_id}</code></dd>
        <dt>Agent</dt>
        <dd>{record.agent_id} ({record.agent_type} {record.agent_version})</dd>
        <dt>Requested</dt>
        <dd>{record.requested_at}</dd>
        <dt>Source</dt>
        <dd>{record.source}</dd>
        <dt>Severity</dt>
        <dd>{record.severity}{record.alert_tier ? ` (${record.alert_tier})` : ''}</dd>
        <dt>Violations</dt>
        <dd>{record.violations.length ? record.violations.join(', ') : 'none'}</dd>
        <dt>Bundle revision</dt>
        <dd><code>{record.bundle_revision}</code></dd>
        <dt>Record hash</dt>
        <dd><code class="small" data-testid="record-hash">{record.record_hash}</code></dd>
        <dt>Previous hash</dt>
        <dd><code class="small">{record.prev_hash}</code></dd>
      </dl>
      <details>
        <summary>Parameters and details</summary>
        <Json value={{ params: record.params, details: record.details }} />
      </details>
      <Evidence record={record} me={me} key={record.record_hash} />
    </section>
  );
}

export function Audit({ me }: { me: Me | null }) {
  const [limit, setLimit] = useState(200);
  const [f, setF] = useState<Filters>(EMPTY);
  const [member, setMember] = useState('');
  const [selected, setSelected] = useState<AuditRecord | null>(null);
  const [chain, setChain] = useState<ChainVerify | null>(null);
  const [notice, setNotice] = useState<{ kind: 'ok' | 'error' | 'info'; text: string } | null>(null);
  const { data, error, reload } = useData(
    async () => (ok(await api.GET('/audit/log', { params: { query: member ? { limit, member } : { limit } } })) as { records: AuditRecord[] }).records,
    [limit, member],
  );
  const rows = useMemo(() => (data ?? []).filter((r) => matches(r, f)), [data, f]);
  const set = (k: keyof Filters) => (e: Event) => setF({ ...f, [k]: (e.currentTarget as HTMLInputElement).value });
  const verify = async () => {
    try {
      setChain(ok(await api.GET('/audit/verify')) as ChainVerify);
    } catch (e) {
      setNotice({ kind: 'error', text: messageOf(e) });
    }
  };
  const anchorNow = async () => {
    setNotice({ kind: 'info', text: 'Building the tree head and anchoring…' });
    try {
      const a = ok(await api.POST('/anchor/trigger')) as { tx_hash: string; tree_index: number; tree_size: number };
      setNotice({ kind: 'ok', text: `Tree head #${a.tree_index} (${a.tree_size} records) anchored in ${a.tx_hash}.` });
    } catch (e) {
      setNotice({ kind: 'error', text: messageOf(e) });
    }
  };
  const distinct = (k: 'decision' | 'source') => [...new Set((data ?? []).map((r) => r[k]))].sort();
  return (
    <section aria-labelledby="audit-title">
      <h1 id="audit-title">Audit log</h1>
      <div class="row wrap">
        <button type="button" onClick={verify}>
          Verify chain
        </button>
        <button type="button" class="secondary" onClick={anchorNow}>
          Build and anchor now
        </button>
        <button type="button" class="secondary" onClick={() => void reload()}>
          Refresh
        </button>
      </div>
      {chain && (
        <Alert kind={chain.valid ? 'ok' : 'error'}>
          {chain.valid
            ? `Chain valid: ${chain.record_count} records, every hash links to the previous one.`
            : `Chain BROKEN at record ${chain.failed_at_record_id} (action ${chain.failed_at_action_id}): ${chain.reason}.`}
        </Alert>
      )}
      {notice && <Alert kind={notice.kind}>{notice.text}</Alert>}
      <form class="filters" aria-label="Filters" onSubmit={(e) => e.preventDefault()}>
        <Field id="f-agent" label="Agent">
          <input id="f-agent" value={f.agent} onInput={set('agent')} />
        </Field>
        <Field id="f-tool" label="Tool or tool.method">
          <input id="f-tool" value={f.tool} onInput={set('tool')} />
        </Field>
        <AnyOf id="f-decision" label="Decision" value={f.decision} options={distinct('decision')} onChange={(v) => setF({ ...f, decision: v })} />
        <AnyOf id="f-source" label="Source" value={f.source} options={distinct('source')} onChange={(v) => setF({ ...f, source: v })} />
        <MemberFilter value={member} onChange={setMember} />
        <Field id="f-from" label="From">
          <input id="f-from" type="datetime-local" value={f.from} onInput={set('from')} />
        </Field>
        <Field id="f-to" label="To">
          <input id="f-to" type="datetime-local" value={f.to} onInput={set('to')} />
        </Field>
        <Field id="f-limit" label="Newest records loaded">
          <select id="f-limit" value={String(limit)} onChange={(e) => setLimit(Number(e.currentTarget.value))}>
            {[50, 200, 1000].map((n) => (
              <option key={n}>{n}</option>
            ))}
          </select>
        </Field>
      </form>
      {error && <Alert>{error}</Alert>}
      <p class="muted">{data ? `${rows.length} of ${data.length} records shown` : 'Loading…'}</p>
      <div class="split">
        <DataTable caption="Audit records, newest first" captionHidden columns={['#', 'Tool', 'Agent', 'Decision', 'Source', 'When']} stacked>
          {rows.map((r) => (
            <tr key={r.id} class={selected?.id === r.id ? 'selected' : ''} data-action-id={r.action_id}>
              <td data-label="#">{r.id}</td>
              <td data-label="Tool">
                <button type="button" class="link" onClick={() => setSelected(r)} aria-label={`Open record ${r.id}: ${r.tool}.${r.method}`}>
                  {r.tool}.{r.method}
                </button>
              </td>
              <td data-label="Agent">{r.agent_id}</td>
              <td data-label="Decision">
                <Badge value={r.decision} />
              </td>
              <td data-label="Source">{r.source}</td>
              <td data-label="When">
                <Time iso={r.requested_at} />
              </td>
            </tr>
          ))}
        </DataTable>
        {selected && <Detail record={selected} me={me} />}
      </div>
      <details class="demo">
        <summary>Tamper demo (local profile only)</summary>
        <p>Changes a stored record behind the chain's back, so "Verify chain" reports where it breaks; restore undoes it.</p>
        <div class="row">
          <button type="button" class="danger" onClick={async () => { try { ok(await api.POST('/audit/tamper-simulate', { body: {} as never })); setNotice({ kind: 'info', text: 'A record was tampered with. Verify the chain.' }); } catch (e) { setNotice({ kind: 'error', text: messageOf(e) }); } }}>
            Tamper with a record
          </button>
          <button type="button" class="secondary" onClick={async () => { try { ok(await api.POST('/audit/tamper-restore')); setNotice({ kind: 'ok', text: 'Restored.' }); } catch (e) { setNotice({ kind: 'error', text: messageOf(e) }); } }}>
            Restore
          </button>
        </div>
      </details>
    </section>
  );
}
