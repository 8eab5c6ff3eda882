/**
 * Policy: the active template, its effective parameters (defaults + overrides) with inline server
 * validation (a 422's loc [body, policy_config, key] is shown at that field), the custom Rego editor with
 * compile errors at their line, and a replay of recent actions under the policy in force or under the
 * unsaved edits (a candidate policy: POST /audit/replay-bulk with `candidate`, nothing saved), and the
 * shadow rollout: the unsaved edits put in shadow on live traffic (PUT /policy/shadow), its report (counts by
 * live → candidate decision, the rules behind the differences, differing calls with their audit records),
 * and Promote / Discard.
 */
import { useEffect, useState } from 'preact/hooks';
import { ApiError, api, messageOf, ok } from '../lib/api';
import { LazyRegoEditor as RegoEditor } from '../lib/lazy-rego-editor';
import { Alert, Badge, ConfirmAction, DataTable, Field, Time, useData } from '../lib/ui';
import type { AuditRecord, BundleSource, ReplayBulk, Settings, ShadowReport, Template } from '../lib/wire';

const STARTER = `package agw.custom

import rego.v1

deny contains "Refunds above 100 EUR need a manager" if {
	input.method == "refund"
	input.params.amount > 100
}

approval contains "Closing an account needs a human" if input.method == "close_account"
`;

type Param = Template['parameters'][number];
const show = (p: Param, v: unknown) => (p.type === 'string' ? String(v ?? '') : JSON.stringify(v));

/** The typed value of a field's text; text that is not of the type is sent as is, for the server to judge. */
function parseValue(p: Param, text: string): unknown {
  if (p.type === 'string') return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

type Candidate = { policy_template?: string; policy_config?: Record<string, unknown>; custom_policy?: string };

function Overrides({ settings, template, onSaved, onDraft }: { settings: Settings; template: Template; onSaved: (s: Settings) => void; onDraft: (c: Candidate | null) => void }) {
  const [values, setValues] = useState<Record<string, string>>({});
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [msg, setMsg] = useState<{ kind: 'ok' | 'error'; text: string } | null>(null);
  useEffect(() => {
    setValues(Object.fromEntries(template.parameters.map((p) => [p.name, show(p, settings.policy_config[p.name] ?? p.default)])));
    setErrors({});
  }, [settings, template]);
  const changed = template.parameters.filter((p) => values[p.name] !== undefined && values[p.name] !== show(p, settings.policy_config[p.name] ?? p.default));
  // the unsaved edits, for the replay below
  useEffect(() => onDraft(changed.length ? { policy_config: Object.fromEntries(changed.map((p) => [p.name, parseValue(p, values[p.name])])) } : null), [values]);
  const save = async (e: Event) => {
    e.preventDefault();
    setMsg(null);
    setErrors({});
    const policy_config = Object.fromEntries(changed.map((p) => [p.name, parseValue(p, values[p.name])]));
    try {
      const s = ok(await api.PATCH('/dashboard/settings', { body: { policy_config } as never })) as Settings;
      setMsg({ kind: 'ok', text: `Saved: bundle revision ${s.bundle_revision}.` });
      onSaved(s);
    } catch (err) {
      if (err instanceof ApiError && err.issues.length) {
        const byField: Record<string, string> = {};
        const other: string[] = [];
        for (const i of err.issues) {
          const key = i.loc[0] === 'body' && i.loc[1] === 'policy_config' ? String(i.loc[2] ?? '') : '';
          if (key && template.parameters.some((p) => p.name === key)) byField[key] = i.msg;
          else other.push(`${i.loc.join('.')}: ${i.msg}`);
        }
        setErrors(byField);
        if (other.length) setMsg({ kind: 'error', text: other.join('; ') });
      } else setMsg({ kind: 'error', text: messageOf(err) });
    }
  };
  const reset = async (p: Param) => {
    try {
      onSaved(ok(await api.PATCH('/dashboard/settings', { body: { policy_config: { [p.name]: null } } as never })) as Settings);
    } catch (err) {
      setMsg({ kind: 'error', text: messageOf(err) });
    }
  };
  return (
    <form onSubmit={save} aria-labelledby="params-title" noValidate>
      <h2 id="params-title">Parameters of “{template.name}”</h2>
      {template.parameters.length === 0 && <p class="muted">This template has no parameters.</p>}
      <div class="grid">
        {template.parameters.map((p) => {
          const id = `param-${p.name}`;
          const overridden = Object.prototype.hasOwnProperty.call(settings.policy_config, p.name) && JSON.stringify(settings.policy_config[p.name]) !== JSON.stringify(p.default);
          return (
            <Field key={p.name} id={id} label={`${p.name} (${p.type})`} hint={`${p.description.replace(/\.?$/, '.')} Default: ${JSON.stringify(p.default)}.`} error={errors[p.name]}>
              {p.type === 'boolean' ? (
                <select id={id} value={values[p.name]} onChange={(e) => setValues({ ...values, [p.name]: e.currentTarget.value })} aria-invalid={!!errors[p.name]} aria-describedby={errors[p.name] ? `${id}-error` : `${id}-hint`}>
                  <option value="true">true</option>
                  <option value="false">false</option>
                </select>
              ) : (
                <input
                  id={id}
                  value={values[p.name] ?? ''}
                  inputMode={p.type === 'integer' || p.type === 'number' ? 'decimal' : undefined}
                  onInput={(e) => setValues({ ...values, [p.name]: e.currentTarget.value })}
                  aria-invalid={!!errors[p.name]}
                  aria-describedby={errors[p.name] ? `${id}-error` : `${id}-hint`}
                />
              )}
              {overridden && (
                <button type="button" class="link small" onClick={() => reset(p)}>
                  Back to default
                </button>
              )}
            </Field>
          );
        })}
      </div>
      {msg && <Alert kind={msg.kind}>{msg.text}</Alert>}
      <button type="submit" disabled={changed.length === 0}>
        Save overrides{changed.length ? ` (${changed.length})` : ''}
      </button>
    </form>
  );
}

function CustomPolicy({ settings, onSaved, onDraft }: { settings: Settings; onSaved: (s: Settings) => void; onDraft: (c: Candidate | null) => void }) {
  const [source, setSource] = useState(settings.custom_policy ?? STARTER);
  useEffect(() => onDraft(source !== (settings.custom_policy ?? STARTER) ? { policy_template: 'custom', custom_policy: source } : null), [source, settings.custom_policy]);
  const [errors, setErrors] = useState<string[]>([]);
  const [msg, setMsg] = useState<{ kind: 'ok' | 'error'; text: string } | null>(null);
  const save = async () => {
    setMsg(null);
    try {
      const s = ok(await api.PATCH('/dashboard/settings', { body: { policy_template: 'custom', custom_policy: source } as never })) as Settings;
      setErrors([]);
      setMsg({ kind: 'ok', text: `Compiled and saved: bundle revision ${s.bundle_revision}.` });
      onSaved(s);
    } catch (err) {
      const compile = err instanceof ApiError ? err.issues.filter((i) => i.loc.includes('custom_policy')).map((i) => i.msg) : [];
      setErrors(compile);
      setMsg({ kind: 'error', text: compile.length ? `The policy does not compile; the old policy stays in force. ${compile.join(' · ')}` : messageOf(err) });
    }
  };
  return (
    <section aria-labelledby="rego-title">
      <h2 id="rego-title">Custom Rego policy</h2>
      <p class="muted">
        <code>package agw.custom</code>; rules <code>deny</code>, <code>warn</code>, <code>approval</code> (docs/policy.md). Saving switches the tenant to the <code>custom</code> template; a policy that does not compile is refused and
        the errors are shown at their line.
      </p>
      <RegoEditor value={source} onChange={setSource} errors={errors} labelId="rego-title" />
      {msg && <Alert kind={msg.kind}>{msg.text}</Alert>}
      <button type="button" onClick={save}>
        Compile and save
      </button>
    </section>
  );
}

function Replay({ revision, candidate }: { revision: string | null; candidate: Candidate | null }) {
  const [result, setResult] = useState<(ReplayBulk & { under: string }) | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const run = async (under: Candidate | null) => {
    setBusy(true);
    setError(null);
    try {
      const { records } = ok(await api.GET('/audit/log', { params: { query: { limit: 200 } } })) as { records: AuditRecord[] };
      const ids = [...new Set(records.filter((r) => r.source === 'mcp_governed').map((r) => r.action_id))].slice(0, 200);
      if (!ids.length) {
        setResult({ total: 0, replayed: 0, consistent_count: 0, changed_count: 0, not_found: [], results: [], under: '' });
        return;
      }
      const r = ok(await api.POST('/audit/replay-bulk', { body: { action_ids: ids, ...(under ? { candidate: under } : {}) } as never })) as ReplayBulk;
      setResult({ ...r, under: under ? 'your unsaved changes (nothing saved)' : `the policy in force (revision ${revision ?? 'default'})` });
    } catch (e) {
      setError(messageOf(e));
    } finally {
      setBusy(false);
    }
  };
  const changed = result?.results.filter((r) => !r.consistent) ?? [];
  return (
    <section aria-labelledby="replay-title">
      <h2 id="replay-title">Replay recent actions</h2>
      <p class="muted">Re-evaluates up to 200 recent governed actions with their original inputs, under the policy in force (revision {revision ?? 'default'}) or under your unsaved edits above, and lists the decisions that would change.</p>
      <button type="button" class="secondary" onClick={() => run(null)} disabled={busy}>
        {busy ? 'Replaying…' : 'Replay recent actions'}
      </button>{' '}
      <button type="button" class="secondary" onClick={() => run(candidate)} disabled={busy || !candidate}>
        Try my unsaved changes
      </button>
      {error && <Alert>{error}</Alert>}
      {result && (
        <div data-testid="replay-result">
          <p>
            Under {result.under}: {result.replayed} replayed · {result.consistent_count} unchanged · <strong>{result.changed_count} would change</strong>
            {result.not_found.length ? ` · ${result.not_found.length} decided before the policy (not replayable)` : ''}
          </p>
          {changed.length > 0 && (
            <DataTable caption="Decisions that would change" captionHidden columns={['Action', 'Tool', 'Was', 'Would be', 'New violations']}>
              {changed.map((r) => (
                <tr key={r.action_id}>
                  <td><code class="small">{r.action_id.slice(0, 8)}</code></td>
                  <td>{r.tool}</td>
                  <td><Badge value={r.original_decision} /></td>
                  <td><Badge value={r.replay_decision} /></td>
                  <td>{r.replay_violations.filter((v) => !r.original_violations.includes(v)).join(', ') || '—'}</td>
                </tr>
              ))}
            </DataTable>
          )}
        </div>
      )}
    </section>
  );
}

/** A differing call's audit records (GET /audit/actions/{action_id}), shown under its row on demand. */
function SampleRecords({ actionId }: { actionId: string }) {
  const { data, error } = useData(async () => (ok(await api.GET('/audit/actions/{action_id}', { params: { path: { action_id: actionId } } })) as { records: AuditRecord[] }).records, [actionId]);
  if (error) return <Alert>{error}</Alert>;
  if (!data) return <p class="muted">Loading…</p>;
  return (
    <ul class="small" data-testid="sample-records">
      {data.map((r) => (
        <li key={r.record_hash}>
          Record #{r.id}: <Badge value={r.decision} /> by revision <code>{r.bundle_revision}</code>, {r.source}, <Time iso={r.requested_at} />, hash <code>{r.record_hash.slice(0, 16)}…</code>
        </li>
      ))}
    </ul>
  );
}

function Shadow({ candidate, onPromoted }: { candidate: Candidate | null; onPromoted: () => void }) {
  const { data: report, error, reload, setData } = useData(async () => ok(await api.GET('/policy/shadow')) as ShadowReport, [], 5000);
  const [maxCalls, setMaxCalls] = useState('10000');
  const [hours, setHours] = useState('24');
  const [msg, setMsg] = useState<{ kind: 'ok' | 'error'; text: string } | null>(null);
  const [confirming, setConfirming] = useState<'promote' | 'discard' | null>(null);
  const [note, setNote] = useState('');
  const [failing, setFailing] = useState<string[]>([]);
  const [opened, setOpened] = useState<string | null>(null);
  if (error) return <Alert>{error}</Alert>;
  if (!report) return <p>Loading…</p>;
  const running = report.status === 'running';
  const start = async () => {
    setMsg(null);
    try {
      const r = ok(await api.PUT('/policy/shadow', { body: { ...candidate, max_calls: Number(maxCalls), duration_seconds: Math.round(Number(hours) * 3600) } as never })) as ShadowReport;
      setData(r);
      setMsg({ kind: 'ok', text: `Shadow started: revision ${r.revision} decides every governed call beside the live policy.` });
    } catch (e) {
      setMsg({ kind: 'error', text: messageOf(e) });
    }
  };
  const discard = async () => {
    setConfirming(null);
    try {
      setData(ok(await api.DELETE('/policy/shadow')) as ShadowReport);
      setMsg({ kind: 'ok', text: 'Shadow discarded; the live policy stays.' });
    } catch (e) {
      setMsg({ kind: 'error', text: messageOf(e) });
    }
  };
  const promote = async () => {
    setConfirming(null);
    try {
      const body = failing.length ? { override_failing_tests: { note } } : {};
      const p = ok(await api.POST('/policy/shadow/promote', { body: body as never })) as { bundle_revision: string };
      setFailing([]);
      setMsg({ kind: 'ok', text: `Promoted: revision ${p.bundle_revision} is live from the next call.` });
      await reload();
      onPromoted();
    } catch (e) {
      const tests = e instanceof ApiError ? e.issues.filter((i) => i.type === 'policy_test_failed' || i.type === 'policy_test_error').map((i) => i.msg) : [];
      setFailing(tests);
      setMsg({ kind: 'error', text: tests.length ? 'The candidate’s tests fail: promoting it needs an override with a note (recorded).' : messageOf(e) });
    }
  };
  const differing = report.transitions.filter((t) => t.live !== t.candidate);
  return (
    <section aria-labelledby="shadow-title" data-testid="shadow-panel">
      <h2 id="shadow-title">Shadow rollout</h2>
      <p class="muted">
        A candidate in shadow decides every governed call beside the live policy, after the answer: the answers, their latency and their records stay those of the live policy (revision <code>{report.live_revision}</code>). It stops
        by itself after its number of calls or its time.
      </p>
      {report.status === 'none' ? (
        <p>No shadow has run yet.</p>
      ) : (
        <div data-testid="shadow-report">
          <p>
            <Badge value={report.status} /> candidate revision <code>{report.revision}</code> ({report.policy_template}), started by {report.started_by} <Time iso={report.started_at!} />;{' '}
            {running ? (
              <>
                ends after {report.max_calls} calls or at <time datetime={report.expires_at!}>{report.expires_at!.slice(0, 16).replace('T', ' ')} UTC</time>
              </>
            ) : (
              <>ended: {report.end_reason}</>
            )}
            .
          </p>
          <p>
            <strong>{report.calls}</strong> calls decided by the candidate · <strong>{report.differing}</strong> differ{report.dropped ? ` · ${report.dropped} not shadowed (queue full)` : ''} · candidate {report.eval_ms.candidate_avg.toFixed(2)} ms per call on
            average, live {report.eval_ms.live_avg.toFixed(2)} ms
          </p>
          <div class="grid">
            <DataTable caption="Live → candidate" columns={['Live', 'Candidate', 'Calls']}>
              {report.transitions.map((t) => (
                <tr key={`${t.live}-${t.candidate}`} class={t.live !== t.candidate ? 'changed' : undefined}>
                  <td><Badge value={t.live} /></td>
                  <td><Badge value={t.candidate} /></td>
                  <td>{t.count}</td>
                </tr>
              ))}
            </DataTable>
            <DataTable caption="Rules behind the differences" columns={['Rule', 'Change', 'Calls']}>
              {report.rules.length === 0 && (
                <tr>
                  <td colSpan={3} class="muted">{differing.length ? 'none named' : 'no differences'}</td>
                </tr>
              )}
              {report.rules.map((r) => (
                <tr key={`${r.rule}-${r.change}`}>
                  <td><code>{r.rule}</code></td>
                  <td>{r.change === 'added' ? 'candidate adds it' : 'candidate drops it'}</td>
                  <td>{r.count}</td>
                </tr>
              ))}
            </DataTable>
          </div>
          {report.samples.length > 0 && (
            <DataTable caption="Latest differing calls" columns={['Action', 'Agent', 'Tool', 'Live', 'Candidate', 'Candidate violations', 'Record']}>
              {report.samples.map((s) => [
                <tr key={s.action_id}>
                  <td><code class="small">{s.action_id.slice(0, 8)}</code></td>
                  <td>{s.agent_id}</td>
                  <td>{s.tool}</td>
                  <td><Badge value={s.live_decision} /></td>
                  <td><Badge value={s.candidate_decision} /></td>
                  <td>{s.candidate_violations.join(', ') || '—'}</td>
                  <td>
                    <button type="button" class="link small" aria-expanded={opened === s.action_id} onClick={() => setOpened(opened === s.action_id ? null : s.action_id)}>
                      {opened === s.action_id ? 'Hide' : 'Audit record'}
                    </button>
                  </td>
                </tr>,
                opened === s.action_id ? (
                  <tr key={`${s.action_id}-records`}>
                    <td colSpan={7}>
                      <SampleRecords actionId={s.action_id} />
                    </td>
                  </tr>
                ) : null,
              ])}
            </DataTable>
          )}
        </div>
      )}
      {msg && <Alert kind={msg.kind}>{msg.text}</Alert>}
      {failing.length > 0 && (
        <div>
          <ul class="small">
            {failing.map((f) => (
              <li key={f}>{f}</li>
            ))}
          </ul>
          <Field id="override-note" label="Why promote although these tests fail (recorded)">
            <input id="override-note" value={note} onInput={(e) => setNote(e.currentTarget.value)} />
          </Field>
        </div>
      )}
      {running ? (
        <p>
          <ConfirmAction
            open={confirming === 'promote'}
            verb={failing.length ? 'Promote over failing tests' : 'Promote'}
            openLabel="Promote the candidate"
            confirmLabel="Confirm promoting the candidate to the live policy"
            onOpen={() => setConfirming('promote')}
            onCancel={() => setConfirming(null)}
            onConfirm={promote}
          />{' '}
          <ConfirmAction
            open={confirming === 'discard'}
            verb="Discard"
            openLabel="Discard the shadow"
            confirmLabel="Confirm discarding the shadow"
            onOpen={() => setConfirming('discard')}
            onCancel={() => setConfirming(null)}
            onConfirm={discard}
          />
        </p>
      ) : (
        <div class="grid">
          <Field id="shadow-max-calls" label="Stop after this many calls" hint="1 to 1,000,000">
            <input id="shadow-max-calls" inputMode="numeric" value={maxCalls} onInput={(e) => setMaxCalls(e.currentTarget.value)} />
          </Field>
          <Field id="shadow-hours" label="Stop after this many hours" hint="at most 720 (30 days)">
            <input id="shadow-hours" inputMode="decimal" value={hours} onInput={(e) => setHours(e.currentTarget.value)} />
          </Field>
          <p>
            <button type="button" onClick={start} disabled={!candidate}>
              Put my unsaved changes in shadow
            </button>
          </p>
        </div>
      )}
    </section>
  );
}

/** The tenant's OPA bundle source (docs/policy.md, "OPA bundles"): where the policy comes from, the last poll, Poll now. */
function BundleSourceCard({ onTaken }: { onTaken: () => void }) {
  const { data, error, setData } = useData(async () => {
    try {
      return ok(await api.GET('/policy/bundle-source')) as BundleSource;
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) return null;
      throw e;
    }
  });
  const [msg, setMsg] = useState<string | null>(null);
  if (error) return <Alert>{error}</Alert>;
  if (data === undefined) return <p>Loading…</p>;
  const poll = async () => {
    setMsg(null);
    try {
      const s = ok(await api.POST('/policy/bundle-source/poll')) as BundleSource;
      setData(s);
      if (s.poll_outcome === 'activated' || s.poll_outcome === 'shadowed') onTaken();
    } catch (e) {
      setMsg(messageOf(e));
    }
  };
  return (
    <section aria-labelledby="bundle-source-title" data-testid="bundle-source">
      <h2 id="bundle-source-title">OPA bundle source</h2>
      {data === null ? (
        <p class="muted">
          No bundle source: the policy is set here. A pipeline can publish signed OPA bundles instead (<code>PUT /api/policy/bundle-source</code>, docs/policy.md, “OPA bundles”).
        </p>
      ) : (
        <>
          <p>
            <code>{data.url}</code>, {data.activation === 'shadow' ? 'each new bundle goes into shadow first' : 'each new bundle is live at once'}; polled <Time iso={data.last_polled_at} />: <Badge value={data.last_outcome} />{' '}
            {data.last_detail}
          </p>
          <p class="muted">
            Last bundle taken: revision <code>{data.revision ?? '—'}</code>, digest <code>{data.digest ? `${data.digest.slice(0, 16)}…` : '—'}</code>.
          </p>
          {msg && <Alert>{msg}</Alert>}
          <button type="button" class="secondary" onClick={poll}>
            Poll now
          </button>
        </>
      )}
    </section>
  );
}

export function Policy() {
  const { data, error, setData } = useData(async () => {
    const [settings, templates] = await Promise.all([api.GET('/dashboard/settings').then(ok), api.GET('/policy/templates').then(ok)]);
    return { settings: settings as Settings, templates: (templates as { templates: Template[] }).templates };
  });
  const [msg, setMsg] = useState<string | null>(null);
  const [drafts, setDrafts] = useState<{ overrides: Candidate | null; rego: Candidate | null }>({ overrides: null, rego: null });
  if (error) return <Alert>{error}</Alert>;
  if (!data) return <p>Loading…</p>;
  const { settings, templates } = data;
  const template = templates.find((t) => t.name === settings.policy_template);
  const onSaved = (s: Settings) => setData({ settings: { ...settings, ...s }, templates });
  const switchTemplate = async (name: string) => {
    setMsg(null);
    if (name === 'custom') return onSaved({ ...settings, policy_template: 'custom' });
    try {
      onSaved(ok(await api.PATCH('/dashboard/settings', { body: { policy_template: name } as never })) as Settings);
    } catch (e) {
      setMsg(messageOf(e));
    }
  };
  return (
    <section aria-labelledby="policy-title">
      <h1 id="policy-title">Policy</h1>
      <div class="card">
        <Field id="template" label="Active template" hint={template?.description ?? 'Your own Rego module (below).'}>
          <select id="template" value={settings.policy_template} onChange={(e) => switchTemplate(e.currentTarget.value)}>
            {[...templates.map((t) => t.name), 'custom'].map((n) => (
              <option key={n}>{n}</option>
            ))}
          </select>
        </Field>
        <p class="muted">
          Bundle revision <code data-testid="bundle-revision">{settings.bundle_revision ?? 'built-in default'}</code>. Switching templates starts from the new template's defaults.
        </p>
        {msg && <Alert>{msg}</Alert>}
      </div>
      {template && (
        <div class="card">
          <Overrides settings={settings} template={template} onSaved={onSaved} onDraft={(c) => setDrafts((d) => ({ ...d, overrides: c }))} />
        </div>
      )}
      <div class="card">
        <CustomPolicy settings={settings} onSaved={onSaved} onDraft={(c) => setDrafts((d) => ({ ...d, rego: c }))} />
      </div>
      <div class="card">
        <Replay revision={settings.bundle_revision} candidate={settings.policy_template === 'custom' ? drafts.rego : drafts.overrides} />
      </div>
      <div class="card">
        <BundleSourceCard onTaken={async () => onSaved(ok(await api.GET('/dashboard/settings')) as Settings)} />
      </div>
      <div class="card">
        <Shadow
          candidate={settings.policy_template === 'custom' ? drafts.rego : drafts.overrides}
          onPromoted={async () => onSaved(ok(await api.GET('/dashboard/settings')) as Settings)}
        />
      </div>
    </section>
  );
}
