import { ProtocolError as McpError } from '@modelcontextprotocol/server';
import { federatedUri, parseFederatedUri, resultOf, splitFederatedName } from './federated-resources';
import { answerModern } from './modern-revision';

describe('federated resource URIs', () => {
  test('agw://<upstream>/<the upstream’s URI, verbatim> is reversible, templates included', () => {
    for (const uri of ['demo://resource/static/document/a%20b.md', 'file:///etc/x?y=1#z', 'https://h/p/{id}', 'agw://other/x']) {
      expect(parseFederatedUri(federatedUri('everything', uri))).toEqual({ upstream: 'everything', uri });
    }
  });

  test('what is not a federated URI', () => {
    for (const uri of ['demo://x', 'agw://', 'agw://everything', 'agw://everything/', 'agw://Bad/x', 'agw://a__b/x']) expect(parseFederatedUri(uri)).toBeUndefined();
  });

  test('a federated prompt name splits at its first "__"', () => {
    expect(splitFederatedName('everything__args-prompt')).toEqual({ upstream: 'everything', name: 'args-prompt' });
    expect(splitFederatedName('a__b__c')).toEqual({ upstream: 'a', name: 'b__c' });
    expect(splitFederatedName('plain')).toBeUndefined();
    expect(splitFederatedName('__x')).toBeUndefined();
  });
});

describe('a decision as a JSON-RPC answer', () => {
  const base = { action_id: '00000000-0000-4000-8000-000000000001', violations: [], severity: 'none' };
  test('executed: the upstream’s result with the action id', () => {
    const r = resultOf('resources/read', { ...base, kind: 'allowed', execution_mode: 'gateway_brokered', mcp_result: true, execution_result: { status_code: 200, body: { contents: [{ uri: 'x', text: 't' }] } } });
    expect(r).toEqual({ contents: [{ uri: 'x', text: 't' }], _meta: { 'io.agw/action_id': base.action_id } });
  });
  test('failed upstream, pending, denied: errors that say so', () => {
    const failed = () => resultOf('prompts/get', { ...base, kind: 'allowed', execution_mode: 'gateway_brokered', mcp_result: true, execution_result: { status_code: 409, body: { error: 'Prompt a/b is quarantined' } } });
    expect(failed).toThrow(/allowed prompts\/get .* upstream failed: Prompt a\/b is quarantined/);
    expect(() => resultOf('resources/read', { ...base, kind: 'pending', message: 'Action x requires human approval.' })).toThrow(/requires human approval.*GET \/api\/actions\//);
    try {
      resultOf('resources/read', { ...base, kind: 'denied', violations: ['secret_uri'], severity: 'high', alert_tier: 'escalate' });
      throw new Error('not thrown');
    } catch (e) {
      expect(e).toBeInstanceOf(McpError);
      expect((e as McpError).code).toBe(-32600);
      expect((e as McpError).message).toMatch(/Denied by the gateway .*secret_uri/);
      expect((e as McpError).data).toMatchObject({ status: 'denied', violations: ['secret_uri'] });
    }
  });
});

describe('the modern era’s hook for the other methods', () => {
  test('a method `other` answers gets resultType and the server in _meta; one it does not answer stays 404 -32601', async () => {
    const handlers = {
      serverInfo: { name: 'agw', version: '1' },
      capabilities: {},
      listTtlMs: 30_000,
      listTools: async () => [],
      callTool: async () => ({}),
      tasks: { get: async () => ({}), cancel: async () => undefined, update: async () => undefined },
      other: async (method: string) => (method === 'prompts/list' ? { prompts: [], ttlMs: 30_000, cacheScope: 'private' } : undefined),
    };
    const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' };
    expect(await answerModern({ jsonrpc: '2.0', id: 1, method: 'prompts/list', params: { _meta: meta } }, handlers)).toEqual({
      status: 200,
      body: { jsonrpc: '2.0', id: 1, result: { resultType: 'complete', prompts: [], ttlMs: 30_000, cacheScope: 'private', _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'agw', version: '1' } } } },
    });
    expect(await answerModern({ jsonrpc: '2.0', id: 2, method: 'resources/subscribe', params: { _meta: meta } }, handlers)).toMatchObject({ status: 404, body: { error: { code: -32601 } } });
  });
});
