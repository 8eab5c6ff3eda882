/**
 * Tools: the tenant's upstream MCP servers (docs/federation.md) with their health, Refresh and Remove, a
 * form to add one, and the selected upstream's tools (upstream-detail.tsx) with the quarantined definitions,
 * their diff and Approve. The selected upstream is in the path (/tools/<name>): a link can be shared, and
 * after a reload (which signs out: the session is in memory) signing in comes back to the same view.
 */
import { useState } from 'preact/hooks';
import { api, ok } from '../lib/api';
import { navigate } from '../lib/router';
import { serverLine, toolsPath } from '../lib/upstreams';
import { Alert, Badge, DataTable, Time, useData } from '../lib/ui';
import { type Flash, UpstreamActions } from './upstream-actions';
import { UpstreamDetail } from './upstream-detail';
import { AddUpstream } from './upstream-form';

export function Tools({ selected }: { selected: string | null }) {
  const { data, error, reload } = useData(async () => ok(await api.GET('/upstreams')).upstreams, [], 10_000);
  const [flash, setFlash] = useState<Flash>(null);
  /** bumped when a row's action changed the catalog, so the open detail reads it again too */
  const [version, setVersion] = useState(0);
  const afterChange = (name: string, removed: boolean, fromRow: boolean) => {
    void reload();
    if (removed && selected === name) navigate(toolsPath(), true);
    else if (fromRow && selected === name) setVersion((v) => v + 1);
  };
  return (
    <section aria-labelledby="tools-title" class="tools-page">
      <h1 id="tools-title">Tools</h1>
      <p class="muted">
        Upstream MCP servers behind the gateway: their tools are listed to agents as <code>&lt;upstream&gt;__&lt;tool&gt;</code>, every call is governed, and a definition that
        changes waits here for a human (docs/federation.md).
      </p>
      <AddUpstream onAdded={(name) => void reload().then(() => navigate(toolsPath(name)))} />
      {error && <Alert>{error}</Alert>}
      {flash && <Alert kind={flash.kind}>{flash.text}</Alert>}
      {data && data.length === 0 && <p class="empty">No upstream yet. Add one above, or POST /api/upstreams.</p>}
      {data && data.length > 0 && (
        <DataTable caption="Upstream MCP servers" captionHidden columns={['Upstream', 'Health', 'Transport', 'Tools', 'Quarantined', 'Read']} actions stacked wrapClass="upstreams">
          {data.map((u) => (
            <tr key={u.name} data-upstream={u.name} class={selected === u.name ? 'selected' : ''} aria-current={selected === u.name ? 'true' : undefined}>
              <td data-label="Upstream">
                <div>
                  <a href={toolsPath(u.name)}>{u.name}</a>
                  <div class="muted small">{serverLine(u)}</div>
                </div>
              </td>
              <td data-label="Health">
                <div>
                  <Badge value={u.status} />
                  {u.status_reason && <div class={`small ${u.status === 'error' ? 'status-error' : 'muted'}`}>{u.status_reason}</div>}
                </div>
              </td>
              <td data-label="Transport">{u.transport === 'sse' ? 'HTTP+SSE' : 'Streamable HTTP'}</td>
              <td data-label="Tools">{u.tool_count}</td>
              <td data-label="Quarantined">{u.quarantined_count > 0 ? <Badge value={`${u.quarantined_count} quarantined`} /> : '0'}</td>
              <td data-label="Read">
                <Time iso={u.refreshed_at} />
              </td>
              <td data-label="" class="actions-cell">
                <UpstreamActions name={u.name} onResult={setFlash} onChanged={(removed) => afterChange(u.name, removed, true)} />
              </td>
            </tr>
          ))}
        </DataTable>
      )}
      {selected && <UpstreamDetail key={selected} name={selected} version={version} onChanged={(removed) => afterChange(selected, removed, false)} />}
    </section>
  );
}
