/**
 * Human-only gates stay human-only (issue 42, the security review's finding 9), through the public API:
 * turning `approvals_require_human` off needs a signed-in human's session; the tenant key, an agent key
 * and a session token made from an API key get a 403 that says so, and nothing of that request is saved.
 * Turning it on stays open to the tenant key (docs/auth.md, "Approvals").
 */
import { api, humanSession, newTenant } from './support/api';

jest.setTimeout(60_000);

describe('approvals_require_human: false needs a signed-in human', () => {
  test('the tenant key, an agent key and a session made from the key are refused; nothing is saved', async () => {
    const t = await newTenant('Human gate');
    const before = await api('GET', '/dashboard/settings', { key: t.apiKey });
    expect(before.body).toMatchObject({ approvals_require_human: true });

    const byKey = await api('PATCH', '/dashboard/settings', { key: t.apiKey, body: { approvals_require_human: false, approval_expiry_seconds: 600 } });
    expect(byKey.status).toBe(403);
    expect(byKey.body.detail).toContain('Turning approvals_require_human off needs a signed-in human');
    expect(byKey.body.detail).toContain('an API key cannot');
    // the POST form of the same route
    expect((await api('POST', '/dashboard/settings', { key: t.apiKey, body: { approvals_require_human: false } })).status).toBe(403);

    const minted = (await api('POST', '/auth/session', { key: t.apiKey })).body.access_token;
    const byMinted = await api('PATCH', '/dashboard/settings', { token: minted, body: { approvals_require_human: false } });
    expect(byMinted.status).toBe(403);
    expect(byMinted.body.detail).toContain('a session token made from an API key cannot');

    const agent = await api('POST', '/api-keys', { key: t.apiKey, body: { scope: 'agent', name: 'gate-agent' } });
    expect(agent.status).toBe(201);
    expect((await api('PATCH', '/dashboard/settings', { key: agent.body.api_key, body: { approvals_require_human: false } })).status).toBe(403);

    const after = await api('GET', '/dashboard/settings', { key: t.apiKey });
    expect(after.body).toMatchObject({ approvals_require_human: true, approval_expiry_seconds: before.body.approval_expiry_seconds });
  });

  test('a signed-in human turns it off; the tenant key turns it on again, and cannot turn it off after that', async () => {
    const t = await newTenant('Human gate off');
    const token = await humanSession(t);
    const off = await api('PATCH', '/dashboard/settings', { token, body: { approvals_require_human: false } });
    expect(off.status).toBe(200);
    expect(off.body).toMatchObject({ approvals_require_human: false });
    // where it is off, sending false again (a read-modify-write of the whole settings) stays open to the key
    expect((await api('PATCH', '/dashboard/settings', { key: t.apiKey, body: { approvals_require_human: false, approval_expiry_seconds: 900 } })).status).toBe(200);
    const on = await api('PATCH', '/dashboard/settings', { key: t.apiKey, body: { approvals_require_human: true } });
    expect(on.status).toBe(200);
    expect(on.body).toMatchObject({ approvals_require_human: true, approval_expiry_seconds: 900 });
    expect((await api('PATCH', '/dashboard/settings', { key: t.apiKey, body: { approvals_require_human: false } })).status).toBe(403);
  });
});
