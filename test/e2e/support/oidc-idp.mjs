/**
 * A real OpenID provider for the SSO tests: panva's `oidc-provider` (the maintained, certified
 * implementation) on a loopback port, run as its own process (it is an ES module).
 *
 *   IDP_PORT=15101 IDP_CLIENTS='[{"client_id":"agw","client_secret":"…","redirect_uris":["…"]}]' node oidc-idp.mjs
 *
 * Its issuer is http://127.0.0.1:<port> (IDP_ISSUER overrides). The login page is a small form: an e-mail
 * address, optional groups (comma-separated) and whether the address is verified; the account is that
 * address and its claims are what the form said (email, email_verified, name, groups). Consent is given
 * at once (first-party clients: `loadExistingGrant` grants the requested scopes). Prints "ready <issuer>".
 */
import { createServer } from 'node:http';
import Provider from 'oidc-provider';

const port = Number(process.env.IDP_PORT);
const issuer = process.env.IDP_ISSUER ?? `http://127.0.0.1:${port}`;
const clients = JSON.parse(process.env.IDP_CLIENTS ?? '[]').map((c) => ({
  grant_types: ['authorization_code'],
  response_types: ['code'],
  token_endpoint_auth_method: 'client_secret_post',
  ...c,
}));

/** accountId (the e-mail) -> claims, as the login form gave them */
const accounts = new Map();

const provider = new Provider(issuer, {
  clients,
  cookies: { keys: ['sso-test-idp-cookie-key-0123456789'] },
  claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'groups'] },
  scopes: ['openid', 'email', 'profile'],
  // the claims of the requested scopes go in the id_token too (the gateway reads them there)
  conformIdTokenClaims: false,
  features: { devInteractions: { enabled: false } },
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  async findAccount(_ctx, id) {
    const a = accounts.get(id);
    if (!a) return undefined;
    return { accountId: id, claims: async () => ({ sub: id, ...a }) };
  },
  async loadExistingGrant(ctx) {
    const grantId = ctx.oidc.result?.consent?.grantId || ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
    if (grantId) return ctx.oidc.provider.Grant.find(grantId);
    const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
    grant.addOIDCScope('openid email profile');
    await grant.save();
    return grant;
  },
});

const page = (uid, client) => `<!doctype html><html><head><meta charset="utf-8"><title>Test IdP: sign in</title></head>
<body style="font-family: sans-serif; max-width: 28rem; margin: 3rem auto">
<h1>Test identity provider</h1><p>Sign in to <b>${client}</b></p>
<form method="post" action="/interaction/${uid}/login">
<label>E-mail <input name="email" type="email" required autofocus></label><br><br>
<label>Groups <input name="groups" placeholder="comma-separated"></label><br><br>
<label><input name="email_verified" type="checkbox" value="true" checked> e-mail verified</label><br><br>
<button type="submit">Sign in</button>
</form></body></html>`;

const readForm = (req) =>
  new Promise((resolve, reject) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => resolve(new URLSearchParams(body)));
    req.on('error', reject);
  });

const callback = provider.callback();
createServer(async (req, res) => {
  try {
    const m = /^\/interaction\/([\w-]+)(\/login)?$/.exec(new URL(req.url, issuer).pathname);
    if (!m) return callback(req, res);
    const details = await provider.interactionDetails(req, res);
    if (req.method === 'GET' && !m[2]) {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      return res.end(page(details.uid, details.params.client_id));
    }
    if (req.method === 'POST' && m[2]) {
      const form = await readForm(req);
      const email = String(form.get('email') ?? '').trim();
      const groups = String(form.get('groups') ?? '').split(',').map((g) => g.trim()).filter(Boolean);
      accounts.set(email, { email, email_verified: form.get('email_verified') === 'true', name: email.split('@')[0], groups });
      return provider.interactionFinished(req, res, { login: { accountId: email } }, { mergeWithLastSubmission: false });
    }
    res.writeHead(405).end();
  } catch (e) {
    res.writeHead(400, { 'content-type': 'text/plain' }).end(String(e?.message ?? e));
  }
}).listen(port, '127.0.0.1', () => console.log(`ready ${issuer}`));
