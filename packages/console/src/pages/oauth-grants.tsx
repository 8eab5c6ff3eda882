/**
 * MCP clients (docs/console.md, "MCP clients"): the OAuth grants of this tenant (GET /api/oauth/grants):
 * which client, whether its identity is vouched for by a metadata document's host or only its own claim,
 * the agent identity it acts as, who consented, when it was last used and when it ends; Revoke ends the grant
 * and every token of it at once (DELETE /api/oauth/grants/{id}). Both need a signed-in human.
 */
import { useState } from 'preact/hooks';
import { api, messageOf, ok } from '../lib/api';
import { Alert, ConfirmAction, DataTable, Time, useData } from '../lib/ui';

export function OauthGrants() {
  const { data, error, reload } = useData(async () => ok(await api.GET('/oauth/grants')).grants, []);
  const [revoking, setRevoking] = useState<string | null>(null);
  const [msg, setMsg] = useState<{ kind: 'ok' | 'error'; text: string } | null>(null);
  const revoke = async (id: string, who: string) => {
    setMsg(null);
    try {
      ok(await api.DELETE('/oauth/grants/{id}', { params: { path: { id } } }));
      setRevoking(null);
      setMsg({ kind: 'ok', text: `The grant of ${who} is revoked: its tokens stop working at once, and the client must ask for consent again.` });
      await reload();
    } catch (e) {
      setMsg({ kind: 'error', text: messageOf(e) });
    }
  };
  const live = (data ?? []).filter((g) => !g.revoked_at && Date.parse(g.expires_at) > Date.now());
  return (
    <section aria-labelledby="grants-title" data-testid="oauth-grants">
      <h1 id="grants-title">MCP clients</h1>
      <p class="muted">
        MCP clients a human let in through OAuth: each acts as an agent of this tenant (every call governed and audited, never an approval) until its grant ends, is revoked
        here, or the tenant key is rotated (setting oauth_grants_end_on_key_rotation).
      </p>
      {msg && <Alert kind={msg.kind}>{msg.text}</Alert>}
      {error && <Alert>{error}</Alert>}
      {data && !live.length && <p class="empty">No MCP client holds a grant.</p>}
      {live.length > 0 && (
        <DataTable caption="MCP clients with a grant" captionHidden columns={['Client', 'Acts as', 'Consented by', 'Granted', 'Last used', 'Ends']} actions>
          {live.map((g) => {
            const who = g.client_name ?? g.client_id;
            return (
              <tr key={g.id} data-grant={g.id}>
                <th scope="row">
                  {who} {!g.client_verified && <span class="badge badge-unverified" title="a dynamically registered client: its name is its own claim">unverified</span>}
                  <div class="muted small">
                    <code>{g.client_id}</code>
                  </div>
                </th>
                <td>
                  <code>{g.agent_name}</code>
                </td>
                <td>{g.granted_by}</td>
                <td>
                  <Time iso={g.created_at} />
                </td>
                <td>
                  <Time iso={g.last_used_at} />
                </td>
                <td>
                  <time datetime={g.expires_at} title={g.expires_at}>
                    {g.expires_at.slice(0, 10)}
                  </time>
                </td>
                <td>
                  <ConfirmAction
                    open={revoking === g.id}
                    verb="Revoke"
                    openLabel={`Revoke the grant of ${who}`}
                    confirmLabel={`Confirm revoking ${who}`}
                    onOpen={() => setRevoking(g.id)}
                    onCancel={() => setRevoking(null)}
                    onConfirm={() => void revoke(g.id, who)}
                  />
                </td>
              </tr>
            );
          })}
        </DataTable>
      )}
    </section>
  );
}
