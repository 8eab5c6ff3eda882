/** PUBLIC_ORIGINS: parsing, the defaults per profile, and the origin of a request (public-origins.ts). */
import { loadGatewayConfig } from '../config';
import { mcpOauthUrls, parsePublicOrigins } from './public-origins';

const req = (host: string | undefined, protocol = 'http') => ({ host, protocol }) as { host: string; protocol: string };

describe('parsePublicOrigins', () => {
  test('origins, normalised (default ports dropped, case folded), duplicates once', () => {
    expect(parsePublicOrigins(' http://LocalHost:8080 , https://gw.example.com:443,http://localhost:8080/ ')).toEqual({ origins: ['http://localhost:8080', 'https://gw.example.com'] });
    expect(parsePublicOrigins('')).toEqual({ origins: [] });
  });

  test.each(['gw.example.com', 'https://gw.example.com/api', 'ftp://gw.example.com', 'https://gw.example.com?x=1', 'https://user:pw@gw.example.com', 'not a url'])('"%s" is refused with the reason', (spec) => {
    expect(parsePublicOrigins(spec)).toEqual({ problem: expect.stringMatching(/origin|URL/) });
  });

  test('the config variable: parsed at start, a bad value names PUBLIC_ORIGINS', () => {
    expect(loadGatewayConfig({ PUBLIC_ORIGINS: 'https://a.example, https://b.example:8443' }).publicOrigins).toEqual(['https://a.example', 'https://b.example:8443']);
    expect(loadGatewayConfig({}).publicOrigins).toBeUndefined();
    expect(() => loadGatewayConfig({ PUBLIC_ORIGINS: 'https://a.example/api' })).toThrow(/PUBLIC_ORIGINS: "https:\/\/a.example\/api" is not an http\(s\) origin/);
  });
});

describe('mcpOauthUrls', () => {
  test('the local profile’s default: PUBLIC_BASE_URL’s origin first, then its loopback twin (same port)', () => {
    const u = mcpOauthUrls('http://127.0.0.1:8080/api', undefined, true);
    expect(u.all.map((o) => o.origin)).toEqual(['http://127.0.0.1:8080', 'http://localhost:8080']);
    expect(mcpOauthUrls('http://localhost:11180/api/', undefined, true).all.map((o) => o.origin)).toEqual(['http://localhost:11180', 'http://127.0.0.1:11180']);
    expect(u).toMatchObject({
      origin: 'http://127.0.0.1:8080',
      resource: 'http://127.0.0.1:8080/api/mcp/server',
      issuer: 'http://127.0.0.1:8080/api/oauth',
      resourceMetadata: 'http://127.0.0.1:8080/.well-known/oauth-protected-resource/api/mcp/server',
    });
    expect(u.all[1]).toEqual({
      origin: 'http://localhost:8080',
      resource: 'http://localhost:8080/api/mcp/server',
      issuer: 'http://localhost:8080/api/oauth',
      resourceMetadata: 'http://localhost:8080/.well-known/oauth-protected-resource/api/mcp/server',
    });
  });

  test('production’s default: PUBLIC_BASE_URL’s origin alone; a non-loopback host has no twin', () => {
    expect(mcpOauthUrls('http://127.0.0.1:8080/api', undefined, false).all.map((o) => o.origin)).toEqual(['http://127.0.0.1:8080']);
    expect(mcpOauthUrls('https://gw.example.com/api', undefined, true).all.map((o) => o.origin)).toEqual(['https://gw.example.com']);
  });

  test('a configured list: PUBLIC_BASE_URL’s origin stays first (and is listed once)', () => {
    const u = mcpOauthUrls('https://gw.example.com/api', ['https://mcp.example.com', 'https://gw.example.com'], false);
    expect(u.all.map((o) => o.origin)).toEqual(['https://gw.example.com', 'https://mcp.example.com']);
    expect(u.all[1].resource).toBe('https://mcp.example.com/api/mcp/server');
  });

  test('of(request): the listed origin it came to, else PUBLIC_BASE_URL’s', () => {
    const u = mcpOauthUrls('http://127.0.0.1:8080/api', undefined, true);
    expect(u.of(req('localhost:8080')).issuer).toBe('http://localhost:8080/api/oauth');
    expect(u.of(req('LOCALHOST:8080')).issuer).toBe('http://localhost:8080/api/oauth');
    expect(u.of(req('127.0.0.1:8080')).issuer).toBe('http://127.0.0.1:8080/api/oauth');
    for (const other of [req('localhost:9999'), req('evil.example'), req('localhost:8080', 'https'), req(undefined), req('bad host:x')]) expect(u.of(other).origin).toBe('http://127.0.0.1:8080');
    const tls = mcpOauthUrls('https://gw.example.com/api', ['https://mcp.example.com'], false);
    expect(tls.of(req('mcp.example.com:443', 'https')).resource).toBe('https://mcp.example.com/api/mcp/server');
  });

  test('byResource: a listed origin’s MCP resource (a trailing slash ignored), nothing else', () => {
    const u = mcpOauthUrls('http://127.0.0.1:8080/api', undefined, true);
    expect(u.byResource('http://localhost:8080/api/mcp/server/')?.origin).toBe('http://localhost:8080');
    expect(u.byResource('http://127.0.0.1:8080/api/mcp/server')?.origin).toBe('http://127.0.0.1:8080');
    expect(u.byResource('http://localhost:8081/api/mcp/server')).toBeUndefined();
    expect(u.byResource('http://localhost:8080/api/oauth')).toBeUndefined();
  });
});
