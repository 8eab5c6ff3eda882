/**
 * One quarantined tool, waiting for a human: why, the tool-poisoning markers found, the diff, and Approve.
 * Approve sends the fingerprint of the candidate shown here, so a definition that changed again meanwhile
 * is a 409 (the page reloads and shows the new candidate) instead of an approval of something unseen. With
 * approvals_require_human, only a signed-in human may approve: an API key's session gets the server's 403.
 */
import { useState } from 'preact/hooks';
import { ApiError, api, messageOf, ok } from '../lib/api';
import { reasonText } from '../lib/upstreams';
import { Alert, Badge } from '../lib/ui';
import type { UpstreamTool } from '../lib/wire';
import { DefinitionDiff } from './definition-diff';
import type { Flash } from './upstream-actions';

interface Props {
  upstream: string;
  tool: UpstreamTool;
  /** the tool was approved, or the page must be read again (409) */
  onDecided: (flash: Flash) => void;
}

export function QuarantinedTool({ upstream, tool, onDecided }: Props) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const approve = async () => {
    setBusy(true);
    setError(null);
    try {
      const body = tool.candidate_sha256 ? { definition_sha256: tool.candidate_sha256 } : {};
      ok(await api.POST('/upstreams/{name}/tools/{tool}/approve', { params: { path: { name: upstream, tool: tool.name } }, body }));
      onDecided({ kind: 'ok', text: `${tool.federated_name} approved: its new definition is pinned and the tool is listed again.` });
    } catch (err) {
      if (err instanceof ApiError && err.status === 409)
        onDecided({ kind: 'warn', text: `${tool.federated_name}: the definition changed again since this page showed it, so nothing was approved. The new candidate is shown now; review it again. (${err.message})` });
      else setError(messageOf(err)); // a 403 (not a signed-in human) or any other refusal: the server's detail
    } finally {
      setBusy(false);
    }
  };
  const title = `q-${upstream}-${tool.name}`;
  return (
    <li class="card quarantined" data-tool={tool.name} aria-labelledby={title}>
      <h3 id={title}>
        <code>{tool.federated_name}</code> <Badge value={tool.state} /> <span class="reason">{tool.reason}</span>
      </h3>
      <p>{reasonText(tool.reason)}</p>
      {tool.markers.length > 0 && (
        <div class="markers">
          <p>
            <strong>Tool-poisoning markers</strong> found in the candidate (docs/federation-scanning.md):
          </p>
          <ul>
            {tool.markers.map((m) => (
              <li key={`${m.rule}|${m.path}|${m.excerpt}`}>
                <Badge value={m.rule} /> at <code>{m.path}</code>: <q>{m.excerpt}</q>
              </li>
            ))}
          </ul>
        </div>
      )}
      <DefinitionDiff tool={tool} />
      <div class="row">
        <button type="button" disabled={busy} onClick={approve}>
          Approve this definition
        </button>
        <span class="muted small">pins the candidate {tool.candidate_sha256 ? <code>{tool.candidate_sha256.slice(0, 12)}</code> : null}; calls of the tool are allowed again</span>
      </div>
      {error && <Alert>{error}</Alert>}
    </li>
  );
}
