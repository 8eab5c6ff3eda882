/** The tools of an upstream that are not waiting for a human: federated name, state, title, description, schemas. */
import { shownDefinition } from '../lib/upstreams';
import { Badge, DataTable, Json } from '../lib/ui';
import type { UpstreamTool } from '../lib/wire';

export function ToolTable({ upstream, tools }: { upstream: string; tools: UpstreamTool[] }) {
  if (tools.length === 0) return <p class="empty">No other tool.</p>;
  return (
    <DataTable caption={`Tools of ${upstream}`} captionHidden columns={['Tool', 'State', 'Description and schemas']} stacked>
      {tools.map((t) => {
        const def = shownDefinition(t);
        return (
          <tr key={t.name} data-tool={t.name} class={t.state === 'absent' ? 'absent' : ''}>
            <td data-label="Tool">
              <div>
                <code>{t.federated_name}</code>
                {def.title && <div class="muted small">{def.title}</div>}
              </div>
            </td>
            <td data-label="State">
              <div>
                <Badge value={t.state} />
                {t.state === 'absent' && <div class="muted small">no longer offered; the pin is kept</div>}
              </div>
            </td>
            <td data-label="Definition" class="definition">
              <div>
                {def.description ?? <span class="empty">no description</span>}
                <details>
                  <summary>Input schema</summary>
                  <Json value={def.inputSchema ?? null} label={`input schema of ${t.federated_name}`} />
                </details>
                {def.outputSchema !== undefined && (
                  <details>
                    <summary>Output schema</summary>
                    <Json value={def.outputSchema} label={`output schema of ${t.federated_name}`} />
                  </details>
                )}
              </div>
            </td>
          </tr>
        );
      })}
    </DataTable>
  );
}
