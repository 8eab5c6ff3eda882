/**
 * Tools: the tenant's upstream MCP servers (docs/federation.md) with their health, the tools each offers
 * with their schemas, and the quarantined definitions with the diff against the pinned one and Approve.
 * The selected upstream is in the path (/tools/<name>), so a reload shows the same view.
 */
import { useState } from 'preact/hooks';
import { ApiError, api, messageOf, ok } from '../lib/api';
import { navigate } from '../lib/router';
import { Alert, Badge, Field, Json, Time, useData } from '../lib/ui';
import type { Upstream, UpstreamTool } from '../lib/wire';
import { DefinitionDiff } from './definition-diff';

type Message = { kind: 'ok' | 'error' | 'warn'; text: string } | null;

function AddUpstream({ onAdded }: { onAdded: (name: string) => void }) {
  const [form, setForm] = useState({ name: '', url: '', transport: 'streamable_http', bearer: '' });
  const [msg, setMsg] = useState<Message>(null);
  const [busy, setBusy] = useState(false);
  const set = (k: keyof typeof form) => (e: Event) => setForm({ ...form, [k]: (e.currentTarget as HTMLInputElement).value });
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    try {
      const body = { name: form.name, url: form.url, transport: form.transport as 'streamable_http' | 'sse', ...(form.bearer ? { credential: { type: 'bearer' as const, value: form.bearer } } : {}) };
      const u = ok(await api.POST('/upstreams', { body }));
      setMsg(u.status === 'connected' ? { kind: 'ok', text: `${u.name} connected: ${u.tool_count} tools.` } : { kind: 'warn', text: `${u.name} registered, not connected: ${u.status_reason ?? ''}` });
      setForm({ name: '', url: '', transport: 'streamable_http', bearer: '' });
      onAdded(u.name);
    } catch (err) {
      setMsg({ kind: 'error', text: messageOf(err) });
    } finally {
      setBusy(false);
    }
  };
  return (
    <details class="card">
      <summary>Add an upstream MCP server</summary>
      <form onSubmit={submit}>
        <div class="row wrap bottom">
          <Field id="up-name" label="Name" hint="a-z 0-9 _ -; tools are listed as <name>__<tool>">
            <input id="up-name" required value={form.name} onInput={set('name')} />
          </Field>
          <Field id="up-url" label="URL">
            <input id="up-url" required type="url" placeholder="https://mcp.example.com/mcp" value={form.url} onInput={set('url')} />
          </Field>
          <Field id="up-transport" label="Transport">
            <select id="up-transport" value={form.transport} onChange={set('transport')}>
              <option value="streamable_http">Streamable HTTP</option>
              <option value="sse">HTTP+SSE (legacy)</option>
            </select>
          </Field>
          <Field id="up-bearer" label="Bearer token (optional)" hint="sealed by the HSM, never shown again">
            <input id="up-bearer" type="password" autocomplete="off" value={form.bearer} onInput={set('bearer')} />
          </Field>
        </div>
        <button type="submit" disabled={busy}>
          {busy ? 'Connecting…' : 'Add upstream'}
        </button>
      </form>
      {msg && <Alert kind={msg.kind}>{msg.text}</Alert>}
    </details>
  );
}

function QuarantinedTool({ upstream, tool, onDecided }: { upstream: string; tool: UpstreamTool; onDecided: () => void }) {
  const [msg, setMsg] = useState<Message>(null);
  const approve = async () => {
    try {
      ok(await api.POST('/upstreams/{name}/tools/{tool}/approve', { params: { path: { name: upstream, tool: tool.name } }, body: { definition_sha256: tool.candidate_sha256 ?? undefined } }));
      setMsg({ kind: 'ok', text: `${tool.federated_name} approved: its new definition is pinned.` });
      onDecided();
    } catch (err) {
      if (err instanceof ApiError && err.status === 409) {
        setMsg({ kind: 'warn', text: `The definition changed again since this page was loaded; review it again. (${err.message})` });
        onDecided();
      } else setMsg({ kind: 'error', text: messageOf(err) });
    }
  };
  return (
    <li class="card quarantined" data-tool={tool.name}>
      <h3>
        <code>{tool.federated_name}</code> <Badge value={tool.state} /> <span class="muted">{tool.reason}</span>
      </h3>
      {tool.markers.length > 0 && (
        <>
          <p>Tool-poisoning markers found (docs/federation-scanning.md):</p>
          <ul class="markers">
            {tool.markers.map((m) => (
              <li key={`${m.rule}|${m.path}`}>
                <strong>{m.rule}</strong> at <code>{m.path}</code>: <code>{m.excerpt}</code>
              </li>
            ))}
          </ul>
        </>
      )}
      <DefinitionDiff tool={tool} />
      <div class="row">
        <button type="button" onClick={approve}>
          Approve this definition
        </button>
      </div>
      {msg && <Alert kind={msg.kind}>{msg.text}</Alert>}
    </li>
  );
}

function UpstreamDetail({ name, onChanged }: { name: string; onChanged: () => void }) {
  const { data, error, reload } = useData(async () => ok(await api.GET('/upstreams/{name}', { params: { path: { name } } })), [name], 10_000);
  const [msg, setMsg] = useState<Message>(null);
  const refresh = async () => {
    try {
      const u = ok(await api.POST('/upstreams/{name}/refresh', { params: { path: { name } } }));
      setMsg({ kind: u.status === 'connected' ? 'ok' : 'warn', text: u.status === 'connected' ? `Read again: ${u.tool_count} active, ${u.quarantined_count} quarantined.` : `Not connected: ${u.status_reason ?? ''}` });
      await reload();
      onChanged();
    } catch (err) {
      setMsg({ kind: 'error', text: messageOf(err) });
    }
  };
  const remove = async () => {
    if (!confirm(`Remove upstream ${name}? Its tools disappear from every MCP client and its credential is deleted.`)) return;
    try {
      ok(await api.DELETE('/upstreams/{name}', { params: { path: { name } } }));
      onChanged();
      navigate('/tools');
    } catch (err) {
      setMsg({ kind: 'error', text: messageOf(err) });
    }
  };
  if (error) return <Alert>{error}</Alert>;
  if (!data) return <p>Loading…</p>;
  const tools = data.tools ?? [];
  const quarantined = tools.filter((t) => t.state === 'quarantined');
  const others = tools.filter((t) => t.state !== 'quarantined');
  return (
    <section aria-labelledby="upstream-title" data-testid="upstream-detail">
      <div class="card">
        <h2 id="upstream-title">
          {data.name} <Badge value={data.status} />
        </h2>
        {data.status_reason && <Alert kind={data.status === 'connected' ? 'info' : 'error'}>{data.status_reason}</Alert>}
        <dl class="facts">
          <dt>URL</dt>
          <dd>
            <code>{data.url}</code> ({data.transport})
          </dd>
          <dt>Server</dt>
          <dd>{data.server ? `${data.server.name} ${data.server.version} (MCP ${data.server.protocol_version})` : '—'}</dd>
          <dt>Credential</dt>
          <dd>{data.credential ? `${data.credential.type}${data.credential.header_name ? ` (${data.credential.header_name})` : ''}, sealed by the HSM` : 'none'}</dd>
          <dt>Filters</dt>
          <dd>{[...data.tools_filter.include.map((g) => `+${g}`), ...data.tools_filter.exclude.map((g) => `−${g}`)].join(' ') || 'all tools'}</dd>
          <dt>Read</dt>
          <dd>
            <Time iso={data.refreshed_at} />
          </dd>
        </dl>
        <div class="row">
          <button type="button" class="secondary" onClick={refresh}>
            Refresh
          </button>
          <button type="button" class="danger" onClick={remove}>
            Remove
          </button>
        </div>
        {msg && <Alert kind={msg.kind}>{msg.text}</Alert>}
      </div>
      {quarantined.length > 0 && (
        <>
          <h3>Quarantined: waiting for a human ({quarantined.length})</h3>
          <ul class="cards single" aria-label="Quarantined tools">
            {quarantined.map((t) => (
              <QuarantinedTool key={t.name} upstream={name} tool={t} onDecided={() => void reload().then(onChanged)} />
            ))}
          </ul>
        </>
      )}
      <h3>Tools ({others.length})</h3>
      <div class="table-wrap">
        <table>
          <caption class="sr-only">Tools of {name}</caption>
          <thead>
            <tr>
              <th scope="col">Tool</th>
              <th scope="col">State</th>
              <th scope="col">Description and schemas</th>
            </tr>
          </thead>
          <tbody>
            {others.map((t) => {
              const def = (t.definition ?? {}) as { title?: string; description?: string; inputSchema?: unknown; outputSchema?: unknown };
              return (
                <tr key={t.name} data-tool={t.name}>
                  <td>
                    <code>{t.federated_name}</code>
                    {def.title && <div class="muted">{def.title}</div>}
                  </td>
                  <td>
                    <Badge value={t.state} />
                  </td>
                  <td>
                    {def.description}
                    <details>
                      <summary>Input schema</summary>
                      <Json value={def.inputSchema} label={`input schema of ${t.name}`} />
                    </details>
                    {def.outputSchema !== undefined && (
                      <details>
                        <summary>Output schema</summary>
                        <Json value={def.outputSchema} label={`output schema of ${t.name}`} />
                      </details>
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </section>
  );
}

export function Tools({ selected }: { selected: string | null }) {
  const { data, error, reload } = useData(async () => ok(await api.GET('/upstreams')).upstreams as Upstream[], [], 10_000);
  return (
    <section aria-labelledby="tools-title" class="tools-page">
      <h1 id="tools-title">Tools</h1>
      <p class="muted">
        Upstream MCP servers behind the gateway: their tools are listed to agents as <code>&lt;upstream&gt;__&lt;tool&gt;</code>, every call is governed, and a definition that
        changes waits here for a human (docs/federation.md).
      </p>
      <AddUpstream onAdded={(name) => void reload().then(() => navigate(`/tools/${encodeURIComponent(name)}`))} />
      {error && <Alert>{error}</Alert>}
      {data && data.length === 0 && <p class="empty">No upstream yet. Add one above, or POST /api/upstreams.</p>}
      {data && data.length > 0 && (
        <div class="table-wrap">
          <table>
            <caption class="sr-only">Upstream MCP servers</caption>
            <thead>
              <tr>
                <th scope="col">Upstream</th>
                <th scope="col">Health</th>
                <th scope="col">Tools</th>
                <th scope="col">Quarantined</th>
                <th scope="col">Read</th>
              </tr>
            </thead>
            <tbody>
              {data.map((u) => (
                <tr key={u.name} class={selected === u.name ? 'selected' : ''}>
                  <td>
                    <a href={`/tools/${encodeURIComponent(u.name)}`}>{u.name}</a>
                    <div class="muted small">{u.server ? `${u.server.name} ${u.server.version}` : u.url}</div>
                  </td>
                  <td>
                    <Badge value={u.status} />
                  </td>
                  <td>{u.tool_count}</td>
                  <td>{u.quarantined_count > 0 ? <Badge value={`${u.quarantined_count} quarantined`} /> : '0'}</td>
                  <td>
                    <Time iso={u.refreshed_at} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {selected && <UpstreamDetail key={selected} name={selected} onChanged={() => void reload()} />}
    </section>
  );
}
