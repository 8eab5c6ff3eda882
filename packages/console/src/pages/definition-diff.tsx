/**
 * A quarantined tool's candidate definition beside the pinned one: one row per changed JSON path (pinned |
 * candidate, from the server's `diff`), then both definitions in full, side by side.
 */
import { diffValue } from '../lib/upstreams';
import { DataTable, Json } from '../lib/ui';
import type { UpstreamTool } from '../lib/wire';

const Sha = ({ sha }: { sha: string | null }) => (sha ? <code class="small" title={`SHA-256 ${sha}`}>{sha.slice(0, 12)}</code> : null);

export function DefinitionDiff({ tool }: { tool: UpstreamTool }) {
  return (
    <div class="definition-diff">
      {tool.diff.length > 0 ? (
        <DataTable caption="Changes, pinned → candidate" columns={['Path', 'Pinned', 'Candidate']} stacked>
          {tool.diff.map((c) => (
            <tr key={c.path}>
              <td data-label="Path" class="diff-path">
                <code>{c.path}</code>
              </td>
              <td data-label="Pinned" class="diff-before">
                <pre>{diffValue(c.before)}</pre>
              </td>
              <td data-label="Candidate" class="diff-after">
                <pre>{diffValue(c.after)}</pre>
              </td>
            </tr>
          ))}
        </DataTable>
      ) : (
        <p class="muted">{tool.definition ? 'No path differs from the pinned definition.' : 'Nothing is pinned yet: the whole definition is new.'}</p>
      )}
      <div class="side-by-side">
        <div>
          <h4>
            Pinned <Sha sha={tool.definition_sha256} />
          </h4>
          {tool.definition ? <Json value={tool.definition} label={`pinned definition of ${tool.name}`} /> : <p class="empty">Nothing pinned yet.</p>}
        </div>
        <div>
          <h4>
            Candidate <Sha sha={tool.candidate_sha256} />
          </h4>
          {tool.candidate ? <Json value={tool.candidate} label={`candidate definition of ${tool.name}`} /> : <p class="empty">No candidate.</p>}
        </div>
      </div>
    </div>
  );
}
