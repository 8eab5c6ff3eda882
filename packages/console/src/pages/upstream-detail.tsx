/**
 * One upstream (GET /api/upstreams/{name}, with its tools): its health and settings, Refresh and Remove,
 * the quarantined tools on top (each with its diff and Approve), then every other tool with its schemas.
 */
import { useState } from 'preact/hooks';
import { api, ok } from '../lib/api';
import { splitTools } from '../lib/upstreams';
import { Alert, Badge, Time, useData } from '../lib/ui';
import { QuarantinedTool } from './quarantined-tool';
import { ToolTable } from './tool-table';
import { type Flash, UpstreamActions } from './upstream-actions';
import { UpstreamConnection } from './upstream-connection';

interface Props {
  name: string;
  /** bumped by the page when the catalog changed elsewhere (a row's Refresh): read again */
  version: number;
  onChanged: (removed: boolean) => void;
}

export function UpstreamDetail({ name, version, onChanged }: Props) {
  const { data, error, reload } = useData(async () => ok(await api.GET('/upstreams/{name}', { params: { path: { name } } })), [name, version], 10_000);
  const [flash, setFlash] = useState<Flash>(null);
  const [decision, setDecision] = useState<Flash>(null);
  const changed = (removed: boolean) => {
    if (!removed) void reload();
    onChanged(removed);
  };
  if (error) return <Alert>{error}</Alert>;
  if (!data) return <p>Loading…</p>;
  const { quarantined, others } = splitTools(data.tools ?? []);
  return (
    <section aria-labelledby="upstream-title" data-testid="upstream-detail" class="upstream-detail">
      <div class="card">
        <div class="row between">
          <h2 id="upstream-title">
            {data.name} <Badge value={data.status} />
          </h2>
          <UpstreamActions name={data.name} onResult={setFlash} onChanged={changed} />
        </div>
        {data.description && <p>{data.description}</p>}
        {data.status_reason && <Alert kind={data.status === 'connected' ? 'info' : data.status === 'needs_authorization' ? 'warn' : 'error'}>{data.status_reason}</Alert>}
        <dl class="facts">
          <dt>URL</dt>
          <dd>
            <code>{data.url}</code>
          </dd>
          <dt>Transport</dt>
          <dd>{data.transport === 'sse' ? 'HTTP+SSE (legacy)' : 'Streamable HTTP'}</dd>
          <dt>Server</dt>
          <dd>{data.server ? `${data.server.name} ${data.server.version} (MCP ${data.server.protocol_version})` : '—'}</dd>
          <dt>Tools</dt>
          <dd>
            {data.tool_count} active, {data.quarantined_count} quarantined
          </dd>
          <dt>Credential</dt>
          <dd>{data.credential ? `${data.credential.type}${data.credential.header_name ? ` (${data.credential.header_name})` : ''}, sealed by the HSM` : 'none'}</dd>
          <dt>Filters</dt>
          <dd>{[...data.tools_filter.include.map((g) => `+${g}`), ...data.tools_filter.exclude.map((g) => `−${g}`)].join(' ') || 'all tools'}</dd>
          <dt>Call timeout</dt>
          <dd>{data.timeout_ms ? `${data.timeout_ms} ms` : 'default'}</dd>
          <dt>Read</dt>
          <dd>
            <Time iso={data.refreshed_at} />
          </dd>
        </dl>
        {flash && <Alert kind={flash.kind}>{flash.text}</Alert>}
      </div>
      <UpstreamConnection upstream={data} onChanged={() => changed(false)} />
      {decision && <Alert kind={decision.kind}>{decision.text}</Alert>}
      {quarantined.length > 0 && (
        <>
          <h3 class="section">Quarantined: waiting for a human ({quarantined.length})</h3>
          <ul class="cards single" aria-label="Quarantined tools">
            {quarantined.map((t) => (
              <QuarantinedTool
                key={`${t.name}|${t.candidate_sha256}`}
                upstream={data.name}
                tool={t}
                onDecided={(f) => {
                  setDecision(f);
                  changed(false);
                }}
              />
            ))}
          </ul>
        </>
      )}
      <h3 class="section">Tools ({others.length})</h3>
      <ToolTable upstream={data.name} tools={others} />
    </section>
  );
}
