import { ClientMetadataDocuments, UNUSABLE } from './client-metadata-documents';
import { boundClientMetadata, redirectUriProblem } from './client-rules';

describe('redirect URIs', () => {
  it.each(['https://app.example/cb', 'http://127.0.0.1:3000/cb', 'http://[::1]/cb', 'http://localhost:8080/cb', 'com.example.app:/cb', 'com.example.app://oauth/cb'])('%s is accepted', (u) => {
    expect(redirectUriProblem(u)).toBeUndefined();
  });
  it.each([
    ['javascript:alert(1)//', 'never'],
    ['data:text/html,<script>x</script>', 'never'],
    ['vbscript:msgbox', 'never'],
    ['file:///etc/passwd', 'never'],
    ['http://evil.example/cb', 'loopback'],
    ['ms-msdt:/id PCWDiagnostic', 'reverse-DNS'],
    ['myapp:/cb', 'reverse-DNS'],
    ['https://app.example/cb#frag', 'fragment'],
    ['not a url', 'not a URL'],
    [`https://app.example/${'a'.repeat(2100)}`, 'at most 2048'],
  ])('%s is refused (%s)', (u, says) => {
    expect(redirectUriProblem(u)).toContain(says);
  });
});

describe('metadata bounds', () => {
  const base = { redirect_uris: ['https://app.example/cb'] };
  it('drops jwks, jwks_uri and software_statement', () => {
    const r = boundClientMetadata({ ...base, jwks: { keys: [] }, jwks_uri: 'https://x', software_statement: 'ey' });
    expect(r).toEqual({ metadata: base });
  });
  it.each([
    [{ ...base, client_name: 'n'.repeat(101) }, 'client_name'],
    [{ redirect_uris: Array.from({ length: 11 }, (_, i) => `https://app.example/${i}`) }, 'at most 10 redirect_uris'],
    [{ ...base, contacts: ['a', 'b', 'c', 'd', 'e', 'f'] }, 'at most 5 contacts'],
    [{ ...base, client_uri: `https://app.example/${'x'.repeat(9000)}` }, '8192 bytes'],
    [{ redirect_uris: ['javascript:x'] }, 'never'],
  ])('refuses %#', (m, says) => {
    const r = boundClientMetadata(m as Record<string, unknown>);
    expect('problem' in r && r.problem).toContain(says);
  });
});

describe('client ID metadata documents', () => {
  const url = 'https://client.example/oauth/client.json';
  const doc = (redirect_uris: string[]) => JSON.stringify({ client_id: url, client_name: 'Claude Desktop', redirect_uris });
  const serving = (body: string) => new ClientMetadataDocuments({ fetch: async () => new Response(body, { status: 200 }) });

  it('refuses a javascript: redirect URI', async () => {
    await expect(serving(doc(['javascript:fetch(`//attacker.example/`)//'])).get(url)).rejects.toThrow('never a redirect URI');
  });
  it('refuses a non-loopback http redirect URI', async () => {
    await expect(serving(doc(['http://evil.example/cb'])).get(url)).rejects.toThrow('loopback');
  });
  it('accepts https', async () => {
    expect((await serving(doc(['https://client.example/cb'])).get(url)).redirect_uris).toEqual(['https://client.example/cb']);
  });
  it('a fetch error is a generic invalid_client; its cause is only logged', async () => {
    const logged: string[] = [];
    const docs = new ClientMetadataDocuments({
      fetch: async () => {
        throw new Error('request failed: ECONNREFUSED 127.0.0.1:1');
      },
      log: (_u, cause) => logged.push(cause),
    });
    const e = await docs.get(url).catch((x: Error) => x);
    expect(String((e as Error).message)).toBe(UNUSABLE);
    expect(String((e as Error).message)).not.toContain('ECONNREFUSED');
    expect(logged[0]).toContain('ECONNREFUSED');
    const status = new ClientMetadataDocuments({ fetch: async () => new Response('no', { status: 502 }) });
    await expect(status.get(url)).rejects.toThrow(UNUSABLE);
  });
  it.each([
    ['an HTML page', '<html>hello</html>', 'not JSON'],
    ['a JSON array', '[1]', 'not a JSON object'],
    ['another client_id', JSON.stringify({ client_id: 'https://client.example/other.json', client_name: 'x', redirect_uris: ['https://client.example/cb'] }), 'not exactly its URL'],
    ['6 KB', JSON.stringify({ pad: 'x'.repeat(6000) }), 'larger than'],
  ])('%s: the same generic invalid_client as an unreachable address (what answered is only logged)', async (_what, body, cause) => {
    const logged: string[] = [];
    const docs = new ClientMetadataDocuments({ fetch: async () => new Response(body, { status: 200 }), log: (_u, c) => logged.push(c) });
    const e = (await docs.get(url).catch((x: Error) => x)) as Error & { errorCode?: string };
    expect(e.message).toBe(UNUSABLE);
    expect(e.errorCode).toBe('invalid_client');
    expect(logged[0]).toContain(cause);
  });
  it('a document that names its own URL is told what is wrong with it', async () => {
    await expect(serving(JSON.stringify({ client_id: url, redirect_uris: ['https://client.example/cb'] })).get(url)).rejects.toThrow('has no client_name');
  });
});
