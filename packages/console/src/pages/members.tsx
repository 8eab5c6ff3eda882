/**
 * Members (docs/console.md, "Members"; docs/auth.md, "Members, invitations and roles"): the tenant's
 * members and their roles (GET /api/members), and for owners and admins: invite by e-mail with a role
 * (POST /api/members/invitations; the accept link is shown once, to pass on), change a role
 * (PATCH /api/members/{id}), remove a member (DELETE /api/members/{id}), the pending invitations and their
 * withdrawal. Only an owner grants or takes the owner role; the last owner stays (the gateway says why).
 */
import { useState } from 'preact/hooks';
import { ApiError, api, messageOf, ok } from '../lib/api';
import { Alert, ConfirmAction, ContinueToSignIn, DataTable, Field, NarrowCard, ShownOnce, Time, useData } from '../lib/ui';
import type { Me } from '../lib/wire';

export const ROLES = ['owner', 'admin', 'policy_author', 'approver', 'auditor', 'viewer'] as const;
type Role = (typeof ROLES)[number];
const LABEL: Record<Role, string> = { owner: 'Owner', admin: 'Admin', policy_author: 'Policy author', approver: 'Approver', auditor: 'Auditor', viewer: 'Viewer' };

export function Members({ me }: { me: Me | null }) {
  const role = (me?.role ?? null) as Role | null;
  const manages = role === 'owner' || role === 'admin';
  const { data, error, reload } = useData(async () => ok(await api.GET('/members')).members, []);
  const invitations = useData(async () => (manages ? ok(await api.GET('/members/invitations')).invitations : []), [manages]);
  const [msg, setMsg] = useState<{ kind: 'ok' | 'error'; text: string } | null>(null);
  const [invite, setInvite] = useState<{ email: string; role: Role }>({ email: '', role: 'viewer' });
  const [sent, setSent] = useState<{ email: string; url: string } | null>(null);
  const [removing, setRemoving] = useState<string | null>(null);
  const grantable = ROLES.filter((r) => r !== 'owner' || role === 'owner');

  const act = async (fn: () => Promise<string>) => {
    setMsg(null);
    try {
      setMsg({ kind: 'ok', text: await fn() });
      await reload();
      await invitations.reload();
    } catch (e) {
      setMsg({ kind: 'error', text: e instanceof ApiError && e.issues.length ? e.issues.map((i) => i.msg).join('; ') : messageOf(e) });
    }
  };
  const submitInvite = (e: Event) => {
    e.preventDefault();
    setSent(null);
    void act(async () => {
      const r = ok(await api.POST('/members/invitations', { body: invite as never }));
      setSent({ email: r.email, url: r.accept_url });
      setInvite({ email: '', role: invite.role });
      return `${r.email} is invited as ${LABEL[r.role as Role]}. The link was sent to them; you can pass it on yourself too.`;
    });
  };

  return (
    <section class="members-page" aria-labelledby="members-title" data-testid="members">
      <h1 id="members-title">Members</h1>
      <p class="muted">
        Who belongs to this tenant and what each may do: owners everything; admins settings, keys, upstreams, credentials and members; policy authors the policy; approvers
        approvals; auditors the audit trail and exports; viewers the pages without records.
      </p>
      {msg && <Alert kind={msg.kind}>{msg.text}</Alert>}
      {error && <Alert>{error}</Alert>}
      {sent && <ShownOnce label={`Invitation link for ${sent.email}`} value={sent.url} />}
      {data && (
        <DataTable caption="Members and their roles" captionHidden columns={['Member', 'Role', 'Joined']} actions={manages}>
          {data.map((m) => {
            const mayTouch = manages && (role === 'owner' || m.role !== 'owner');
            return (
              <tr key={m.id} data-member={m.email}>
                <th scope="row">
                  {m.email} {m.id === me?.user_id && <span class="muted">(you)</span>}
                </th>
                <td>
                  {mayTouch ? (
                    <select
                      aria-label={`Role of ${m.email}`}
                      value={m.role}
                      onChange={(e) => {
                        const next = e.currentTarget.value as Role;
                        void act(async () => {
                          ok(await api.PATCH('/members/{id}', { params: { path: { id: m.id } }, body: { role: next } as never }));
                          return `${m.email} is ${LABEL[next]} now.`;
                        }).then(() => undefined);
                      }}
                    >
                      {(m.role === 'owner' ? ROLES : grantable).map((r) => (
                        <option key={r} value={r}>
                          {LABEL[r]}
                        </option>
                      ))}
                    </select>
                  ) : (
                    <span class="badge">{LABEL[m.role as Role] ?? m.role}</span>
                  )}
                </td>
                <td>
                  <Time iso={m.created_at} />
                </td>
                {manages && (
                  <td>
                    {mayTouch && (
                      <ConfirmAction
                        open={removing === m.id}
                        verb="Remove"
                        openLabel={`Remove ${m.email}`}
                        confirmLabel={`Confirm removing ${m.email}`}
                        onOpen={() => setRemoving(m.id)}
                        onCancel={() => setRemoving(null)}
                        onConfirm={() =>
                          void act(async () => {
                            setRemoving(null);
                            ok(await api.DELETE('/members/{id}', { params: { path: { id: m.id } } }));
                            return `${m.email} is removed: their sessions ended and the MCP clients they let in lost their grants.`;
                          })
                        }
                      />
                    )}
                  </td>
                )}
              </tr>
            );
          })}
        </DataTable>
      )}
      {manages && (
        <>
          <h2>Invite</h2>
          <form class="inline-form" onSubmit={submitInvite} data-testid="invite-form">
            <Field id="inv-email" label="E-mail">
              <input id="inv-email" type="email" required value={invite.email} onInput={(e) => setInvite({ ...invite, email: e.currentTarget.value })} />
            </Field>
            <Field id="inv-role" label="Role">
              <select id="inv-role" value={invite.role} onChange={(e) => setInvite({ ...invite, role: e.currentTarget.value as Role })}>
                {grantable.map((r) => (
                  <option key={r} value={r}>
                    {LABEL[r]}
                  </option>
                ))}
              </select>
            </Field>
            <button type="submit">Send invitation</button>
          </form>
          <h2>Pending invitations</h2>
          {invitations.error && <Alert>{invitations.error}</Alert>}
          {invitations.data && !invitations.data.length && <p class="empty">No invitation is pending.</p>}
          {invitations.data && invitations.data.length > 0 && (
            <DataTable caption="Pending invitations" captionHidden columns={['E-mail', 'Role', 'Invited by', 'Expires']} actions testId="invitations">
              {invitations.data.map((i) => (
                <tr key={i.id}>
                  <th scope="row">{i.email}</th>
                  <td>{LABEL[i.role as Role] ?? i.role}</td>
                  <td>{i.invited_by}</td>
                  <td>{i.expired ? <span class="badge">expired</span> : <time datetime={i.expires_at}>{i.expires_at.slice(0, 10)}</time>}</td>
                  <td>
                    <button
                      type="button"
                      class="secondary"
                      aria-label={`Withdraw the invitation of ${i.email}`}
                      onClick={() =>
                        void act(async () => {
                          ok(await api.DELETE('/members/invitations/{id}', { params: { path: { id: i.id } } }));
                          return `The invitation of ${i.email} is withdrawn: its link no longer works.`;
                        })
                      }
                    >
                      Withdraw
                    </button>
                  </td>
                </tr>
              ))}
            </DataTable>
          )}
        </>
      )}
    </section>
  );
}

/** The page an invitation link opens (/invitation#token=…): choose a password, then sign in. */
export function AcceptInvitation() {
  const token = new URLSearchParams(location.hash.slice(1)).get('token') ?? '';
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<{ email: string; role: string } | null>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(null);
    try {
      const r = ok(await api.POST('/members/invitations/accept', { body: { token, password } as never }));
      setDone({ email: r.email, role: r.role });
      history.replaceState(null, '', location.pathname);
    } catch (err) {
      setError(err instanceof ApiError && err.issues.length ? err.issues.map((i) => i.msg).join('; ') : messageOf(err));
    }
  };
  if (done)
    return (
      <NarrowCard id="inv-title" title="Welcome">
        <p>
          You are a member now: <strong>{done.email}</strong>, role <strong>{LABEL[done.role as Role] ?? done.role}</strong>.
        </p>
        <ContinueToSignIn />
      </NarrowCard>
    );
  return (
    <NarrowCard id="inv-title" title="Accept the invitation">
      {!token && <Alert kind="warn">This link carries no invitation token: open the link from the invitation as it was sent.</Alert>}
      {error && <Alert>{error}</Alert>}
      <form onSubmit={submit}>
        <Field id="inv-password" label="Choose a password" hint="At least 8 characters. You sign in with the invited e-mail address and this password.">
          <input id="inv-password" type="password" autocomplete="new-password" required minLength={8} value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
        </Field>
        <button type="submit" disabled={!token}>
          Join the tenant
        </button>
      </form>
    </NarrowCard>
  );
}
