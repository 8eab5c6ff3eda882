/** A quarantined tool's definition beside the pinned one: the changed paths, then both in full. */
import { Json } from '../lib/ui';
import type { UpstreamTool } from '../lib/wire';

const shown = (v: unknown) => (v === undefined ? '—' : typeof v === 'string' ? v : JSON.stringify(v, null, 2));

export function DefinitionDiff({ tool }: { tool: UpstreamTool }) {
  return (
    <div class="definition-diff">
      <div class="table-wrap">
        <table>
          <caption>Changes, pinned → candidate</caption>
          <thead>
            <tr>
              <th scope="col">Path</th>
              <th scope="col">Pinned</th>
              <th scope="col">Candidate</th>
            </tr>
          </thead>
          <tbody>
            {tool.diff.map((c) => (
              <tr key={c.path}>
                <td>
                  <code>{c.path}</code>
                </td>
                <td class="diff-before">
                  <pre>{shown(c.before)}</pre>
                </td>
                <td class="diff-after">
                  <pre>{shown(c.after)}</pre>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <div class="side-by-side">
        <div>
          <h4>Pinned {tool.definition_sha256 ? <code class="small">{tool.definition_sha256.slice(0, 12)}</code> : '(none: a new tool)'}</h4>
          {tool.definition ? <Json value={tool.definition} label="pinned definition" /> : <p class="empty">Nothing pinned yet.</p>}
        </div>
        <div>
          <h4>Candidate {tool.candidate_sha256 && <code class="small">{tool.candidate_sha256.slice(0, 12)}</code>}</h4>
          <Json value={tool.candidate} label="candidate definition" />
        </div>
      </div>
    </div>
  );
}
